/**
 * Hostile test of a restart reading a damaged snapshot file (bit rot, a bad sector, bytes
 * inserted or lost: NOT checksummed again). The checksum must refuse it, whatever the damage
 * made the state's reader or the restore do meanwhile: no hang, no crash, no allocation the
 * file's size does not bound; a restart ignores it (RUNLOG_SNAPSHOT_IGNORED) and opens as a
 * replay would. Each damage is opened in a child with a small heap, so one that runs the
 * process out of memory fails the row instead of the runner.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { it } from 'node:test';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { GOLDEN_STATE } from '../events/golden-snapshots.ts';
import { scratchDir } from '../support/cleanup.ts';

const ARRAYS = ['threads', 'closedEntries', 'closedIndex', 'submissionKeys', 'answers'] as const;

/** Where in the snapshot file each array's count lies (the state's bytes lie whole in the file). */
function countPositions(file: Buffer): Record<string, number> {
  const snapshot = decodeSnapshot(file);
  const state = decodeSnapshotState(snapshot.state);
  const stateAt = file.indexOf(Buffer.from(snapshot.state));
  const positions: Record<string, number> = {};
  for (const field of ARRAYS) {
    const before = Buffer.from(encodeSnapshotState({ ...state, [field]: [] }));
    const after = Buffer.from(encodeSnapshotState({ ...state, [field]: GOLDEN_STATE[field].slice(0, 1) }));
    let at = 0;
    while (before[at] === after[at]) at++;
    // In the real state the count is the byte where an empty array's 0 would be (a count < 64 is one byte).
    positions[field] = stateAt + at;
  }
  return positions;
}

it(
  'a snapshot file damaged (not checksummed again) is refused by its checksum: the open neither hangs nor dies',
  { timeout: 600_000 },
  async (t) => {
    const base = await scratchDir(t, 'runlog-snapshot-rot-');
    const queue = await openRunQueueOnLog(await openFileLog({ dir: base, partitions: 1, fsync: false }));
    for (let i = 0; i < 30; i++) await queue.submit({ tenant: 'acme', thread: `t${i % 4}`, agent: 'build', input: `w${i}`, key: `k${i}` });
    for (let i = 0; i < 10; i++) {
      const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
      await queue.close(taken!.lease, { status: 'succeeded', result: 'ok' });
    }
    await queue.stop(); // its snapshot
    const log = await openFileLog({ dir: base, fsync: false });
    const stored = (await log.snapshots!.list(0))[0]!;
    await log.close();
    const file = await readFile(stored.name);
    const positions = countPositions(file);
    // Damages: each array's count rotten into 2^30 (5 bytes), and bits flipped spread over the file.
    const damages: Array<[string, (bytes: Buffer) => Buffer]> = [];
    for (const [field, at] of Object.entries(positions)) {
      damages.push([
        `${field}'s count rotten into 2^30`,
        (b) => Buffer.concat([b.subarray(0, at), Buffer.from([0x80, 0x80, 0x80, 0x80, 0x08]), b.subarray(at + 5)]),
      ]);
    }
    for (let i = 1; i < 6; i++) {
      const at = Math.floor((file.length * i) / 6);
      damages.push([`bit 3 of byte ${at} flipped`, (b) => Buffer.from(b.map((v, j) => (j === at ? v ^ 8 : v)))]);
    }
    const child = join(import.meta.dirname, 'snapshot-array-count-child.ts');
    const failures: string[] = [];
    for (const [what, damage] of damages) {
      const dir = await scratchDir(t, 'runlog-snapshot-rot-row-');
      await cp(base, dir, { recursive: true });
      await writeFile(join(dir, stored.name.slice(base.length)), damage(file));
      const run = promisify(execFile)(process.execPath, ['--max-old-space-size=64', '--import', 'tsx', child, dir], { timeout: 60_000 });
      const outcome = await run.then(
        ({ stdout }) => JSON.parse(stdout) as { warnings: { code: string; message: string }[]; equal: boolean[] },
        (error: Error & { stderr?: string; killed?: boolean }) =>
          error.killed === true ? 'the open did not end within a minute' : `the open failed: ${fatal(error.stderr ?? error.message)}`,
      );
      if (typeof outcome === 'string') failures.push(`${what}: ${outcome}`);
      else if (!outcome.equal.every(Boolean)) failures.push(`${what}: the view opened differs from the replay`);
      else if (!outcome.warnings.some((warning) => warning.code === 'RUNLOG_SNAPSHOT_IGNORED'))
        failures.push(`${what}: not ignored: ${JSON.stringify(outcome.warnings)}`);
    }
    assert.deepEqual(failures, []);
  },
);

/** The line of a child's stderr that says why it died (V8's FATAL ERROR), else its first line. */
function fatal(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return lines.find((line) => line.includes('FATAL ERROR')) ?? lines[0] ?? '';
}
