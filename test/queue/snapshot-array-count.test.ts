/**
 * Hostile test: a snapshot whose state, checksummed (a wrong writer, not bit rot), gives one of
 * its arrays a count of 2^30 items where the bytes hold none. A restart must ignore it
 * (RUNLOG_SNAPSHOT_IGNORED) and open as a replay from zero would: the decode must not believe
 * the count (avsc reads past the end of its buffer without bound and only then finds it short,
 * so it spins, then dies out of memory). Each array of the state in turn; the open runs in a
 * child with a small heap (snapshot-array-count-child.ts). On main at c8ec9d5 the open dies out of
 * memory for 4 of the 5 arrays (threads alone is refused): a todo until the decode bounds counts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { it } from 'node:test';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import type { PartitionState } from '../../src/events/snapshot-types.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { GOLDEN_STATE } from '../events/golden-snapshots.ts';
import { scratchDir } from '../support/cleanup.ts';

const ARRAYS = ['threads', 'closedEntries', 'closedIndex', 'submissionKeys', 'answers'] as const;

/** Avro's encoding of the long `value` (zigzag varint). */
function avroLong(value: bigint): number[] {
  let n = value >= 0n ? value * 2n : -value * 2n - 1n;
  const out: number[] = [];
  while (n >= 0x80n) {
    out.push(Number((n & 0x7fn) | 0x80n));
    n >>= 7n;
  }
  return [...out, Number(n)];
}

/** `state` with `field` empty, its count (a single 0 byte) then replaced by 2^30. */
function countLie(state: PartitionState, field: (typeof ARRAYS)[number]): Uint8Array {
  const empty = Buffer.from(encodeSnapshotState({ ...state, [field]: [] }));
  const one = Buffer.from(encodeSnapshotState({ ...state, [field]: GOLDEN_STATE[field].slice(0, 1) }));
  let at = 0;
  while (empty[at] === one[at]) at++;
  assert.equal(empty[at], 0, `${field}'s count found at byte ${at}`);
  return Buffer.concat([empty.subarray(0, at), Buffer.from(avroLong(2n ** 30n)), empty.subarray(at + 1)]);
}

/** The line of a child's stderr that says why it died (V8's FATAL ERROR), else its first line. */
function fatal(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines.find((line) => line.includes('FATAL ERROR')) ?? lines[0] ?? '';
}

/** Finding (integrity, session 10): handed to `restart` (snapshot-codec.ts decode): drop this once the decode bounds counts. */
const BELIEVES_COUNTS = 'the decode believes an array count its bytes cannot hold: avsc reads on past the end until out of memory';

it(
  'a checksummed snapshot whose array count lies (2^30 items) is ignored, every array of the state',
  { timeout: 300_000, todo: BELIEVES_COUNTS },
  async (t) => {
    const base = await scratchDir(t, 'runlog-snapshot-count-');
    const queue = await openRunQueueOnLog(await openFileLog({ dir: base, partitions: 1, fsync: false }));
    for (let i = 0; i < 30; i++) await queue.submit({ tenant: 'acme', thread: `t${i % 4}`, agent: 'build', input: `w${i}`, key: `k${i}` });
    for (let i = 0; i < 10; i++) {
      const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
      await queue.close(taken!.lease, { status: 'succeeded', result: 'ok' });
    }
    await queue.stop(); // its snapshot
    const failures: string[] = [];
    for (const field of ARRAYS) {
      const dir = await scratchDir(t, `runlog-snapshot-count-${field}-`);
      await cp(base, dir, { recursive: true });
      const log = await openFileLog({ dir, fsync: false });
      const stored = (await log.snapshots!.list(0))[0]!;
      const snapshot = decodeSnapshot(await stored.read());
      const state = countLie(decodeSnapshotState(snapshot.state), field);
      await log.snapshots!.save(0, encodeSnapshot({ ...snapshot, state }), snapshot.nextOffset);
      await log.close();
      const child = join(import.meta.dirname, 'snapshot-array-count-child.ts');
      const run = promisify(execFile)(process.execPath, ['--max-old-space-size=64', '--import', 'tsx', child, dir]);
      const outcome = await run.then(
        ({ stdout }) => JSON.parse(stdout) as { warnings: { code: string; message: string }[]; equal: boolean[] },
        (error: Error & { stderr?: string }) => `the open failed: ${fatal(error.stderr ?? error.message)}`,
      );
      if (typeof outcome === 'string') failures.push(`${field}: ${outcome}`);
      else if (!outcome.equal.every(Boolean)) failures.push(`${field}: the view opened differs from the replay`);
      else if (!outcome.warnings.some((warning) => warning.code === 'RUNLOG_SNAPSHOT_IGNORED' && warning.message.includes(stored.name)))
        failures.push(`${field}: the snapshot was not ignored: ${JSON.stringify(outcome.warnings)}`);
    }
    assert.deepEqual(failures, []);
  },
);
