/**
 * What the damaged-snapshot tests share (snapshot-bit-rot, snapshot-array-count and its Kafka
 * twin): a small queue's log whose every partition ends with a snapshot, the counts that lie
 * (../events/snapshot-counts.ts), and a child process (snapshot-open-child.ts,
 * with a small heap) that opens every partition as a restart does, so that a decode that reads
 * without bound kills the child, not the test runner.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot } from '../../src/events/snapshot-codec.ts';
import type { SnapshotStore } from '../../src/log/snapshot-store.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { ARRAYS, COUNT_LIES, withCountLie, type StateArray } from '../events/snapshot-counts.ts';

/**
 * Submits 180 entries over 60 threads (each test asserts that every partition it damages got
 * some), closes a quarter of them, and stops the queue: its stop leaves a snapshot of each
 * partition written, holding open entries, closed ones, keys and answers.
 */
export async function smallWorkload(queue: RunQueue): Promise<void> {
  for (let i = 0; i < 180; i++) await queue.submit({ tenant: 'acme', thread: `t${i % 60}`, agent: 'build', input: `w${i}`, key: `k${i}` });
  for (let i = 0; i < 45; i++) {
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
    await queue.close(taken!.lease, { status: 'succeeded', result: 'ok' });
  }
  await queue.stop(); // its snapshots
}

/** Each array of the state with each lie of COUNT_LIES: one damage a partition (10). */
export const COUNT_DAMAGES: readonly { what: string; field: StateArray; bytes: readonly number[] }[] = COUNT_LIES.flatMap(([lie, bytes]) =>
  ARRAYS.map((field) => ({ what: `${field}: ${lie}`, field, bytes })),
);

/** Saves, as each partition's newest snapshot, its newest one with COUNT_DAMAGES[partition]'s lie in its state, checksummed. */
export async function saveCountLies(store: SnapshotStore): Promise<void> {
  for (const [partition, { field, bytes }] of COUNT_DAMAGES.entries()) {
    const stored = (await store.list(partition))[0];
    assert.ok(stored, `partition ${partition} has a snapshot`);
    const snapshot = decodeSnapshot(await stored.read());
    const state = withCountLie(decodeSnapshotState(snapshot.state), field, bytes);
    await store.save(partition, encodeSnapshot({ ...snapshot, state }), snapshot.nextOffset);
  }
}

/** What the child said of one partition's open. */
export interface OpenedPartition {
  partition: number;
  warnings: RunlogWarning[];
  /** Its view equals a replay from zero. */
  equal: boolean;
}

/** The child's lines, and why it failed if it did (the partitions after the last line were not opened). */
export interface ChildOpen {
  opened: OpenedPartition[];
  failure: string | null;
}

const CHILD = join(import.meta.dirname, 'snapshot-open-child.ts');

/** Opens every partition of the log (`file <dir>` or `kafka <topic>`) in a child with a 64 MB heap, given `timeoutMs` in all. */
export async function openInChild(log: ['file' | 'kafka', string], timeoutMs: number): Promise<ChildOpen> {
  const args = ['--max-old-space-size=64', '--import', 'tsx', CHILD, ...log];
  const { stdout, failure } = await new Promise<{ stdout: string; failure: string | null }>((resolve) => {
    execFile(process.execPath, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error === null) resolve({ stdout, failure: null });
      else if (error.killed === true) resolve({ stdout, failure: `the opens did not end within ${timeoutMs / 1000} s` });
      else resolve({ stdout, failure: `the child died: ${fatal(stderr || error.message)}` });
    });
  });
  const opened = stdout
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as OpenedPartition);
  return { opened, failure };
}

/**
 * Each damaged partition's problem (none: its snapshot was ignored, RUNLOG_SNAPSHOT_IGNORED, and
 * its view equals a replay), `what` naming the damage of each partition.
 */
export function notIgnored(child: ChildOpen, what: readonly string[]): string[] {
  return what.flatMap((damage, partition) => {
    const outcome = child.opened.find((o) => o.partition === partition);
    if (outcome === undefined) return [`${damage}: not opened (${child.failure ?? 'the child ended before it'})`];
    if (!outcome.equal) return [`${damage}: the view opened differs from the replay`];
    if (!outcome.warnings.some((warning) => warning.code === 'RUNLOG_SNAPSHOT_IGNORED'))
      return [`${damage}: the snapshot was not ignored: ${JSON.stringify(outcome.warnings)}`];
    return [];
  });
}

/** The line of a child's stderr that says why it died (V8's FATAL ERROR), else its first line. */
export function fatal(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines.find((line) => line.includes('FATAL ERROR')) ?? lines[0] ?? '';
}
