/**
 * What the damaged-snapshot tests share (snapshot-bit-rot, snapshot-array-count and its Kafka
 * twin): a small queue's log whose every partition ends with a snapshot, where an array's count
 * lies in a state's bytes and how to make it lie, and a child process (snapshot-open-child.ts,
 * with a small heap) that opens every partition as a restart does, so that a decode that reads
 * without bound kills the child, not the test runner.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import type { PartitionState } from '../../src/events/snapshot-types.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { GOLDEN_STATE } from '../events/golden-snapshots.ts';

/** The state's arrays, in the schema's order. */
export const ARRAYS = ['threads', 'closedEntries', 'closedIndex', 'submissionKeys', 'answers'] as const;
export type StateArray = (typeof ARRAYS)[number];

/** Avro's encoding of the long `value` (zigzag varint). */
export function avroLong(value: bigint): number[] {
  let n = value >= 0n ? value * 2n : -value * 2n - 1n;
  const out: number[] = [];
  while (n >= 0x80n) {
    out.push(Number((n & 0x7fn) | 0x80n));
    n >>= 7n;
  }
  return [...out, Number(n)];
}

/**
 * Counts that lie, as bytes in an empty array's place: 2^30 items; and one block of -2^30 items
 * said to be 0 bytes long, then the array's end (a negative count gives the block's byte size
 * next: a reader that skips a block by its size never sees the count a decoder believes).
 */
export const COUNT_LIES: readonly (readonly [string, readonly number[]])[] = [
  ['2^30 items', avroLong(2n ** 30n)],
  ['-2^30 items in a block of 0 bytes', [...avroLong(-(2n ** 30n)), 0, 0]], // the count, the block's size, the array's end
];

/**
 * Where `field`'s count lies in the encoding of `state` (encodeSnapshotState): the first byte
 * that differs between the state with that array empty and with one item. The fields before
 * it are the same in both, so it is also where the count lies in `state`'s own encoding.
 */
export function countOffset(state: PartitionState, field: StateArray): number {
  const empty = Buffer.from(encodeSnapshotState({ ...state, [field]: [] }));
  const one = Buffer.from(encodeSnapshotState({ ...state, [field]: GOLDEN_STATE[field].slice(0, 1) }));
  let at = 0;
  while (empty[at] === one[at]) at++;
  assert.equal(empty[at], 0, `${field}'s count found at byte ${at}`);
  return at;
}

/** `state` with `field` empty, its count (a single 0 byte) then replaced by `lie`. */
export function withCountLie(state: PartitionState, field: StateArray, lie: readonly number[]): Uint8Array {
  const empty = Buffer.from(encodeSnapshotState({ ...state, [field]: [] }));
  const at = countOffset(state, field);
  return Buffer.concat([empty.subarray(0, at), Buffer.from(lie), empty.subarray(at + 1)]);
}

/**
 * Submits 3 entries to each of 4 threads a partition (60 threads: every partition of up to
 * 15 gets some), closes a quarter of them, and stops the queue: its stop leaves a snapshot of
 * every partition, holding open entries, closed ones, keys and answers.
 */
export async function smallWorkload(queue: RunQueue): Promise<void> {
  for (let i = 0; i < 180; i++) await queue.submit({ tenant: 'acme', thread: `t${i % 60}`, agent: 'build', input: `w${i}`, key: `k${i}` });
  for (let i = 0; i < 45; i++) {
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
    await queue.close(taken!.lease, { status: 'succeeded', result: 'ok' });
  }
  await queue.stop(); // its snapshots
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
