/**
 * Hostile test: a snapshot whose state, checksummed (a wrong writer, not bit rot), gives one of
 * its arrays a count its bytes cannot hold: 2^30 items where there are none, or -2^30 items in a
 * block said to be 0 bytes long. avsc believes a count (it reads on past the end of its buffer
 * and only then finds it short: it spins, then dies out of memory), so every reader must walk
 * the state within its bytes first and refuse it (snapshot-codec.ts, avro-skip.ts). Each array
 * of the state with each lie, one a partition of one file log:
 *   - a restart reading the snapshot where it lies (the file log's store) ignores it
 *     (RUNLOG_SNAPSHOT_IGNORED) and opens as a replay from zero would, in a child with a small
 *     heap (snapshot-open-child.ts);
 *   - `runlog verify` decodes each snapshot's bytes whole (as Kafka's store does: its Kafka twin
 *     is snapshot-array-count.kafka.test.ts) and reports each as ignored, Corrupt, also with a
 *     small heap.
 * On main at 53c1d5a the whole-bytes decode died out of memory on the first partition, and the
 * read where it lies on the -2^30 lie (it skipped a sized block by its size).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { runlogChild } from '../cli/run-cli.ts';
import { COUNT_DAMAGES, fatal, notIgnored, openInChild, saveCountLies, smallWorkload } from './snapshot-damage.ts';

/** One damage a partition: each array with each lie. */
describe('a checksummed snapshot whose array count lies is refused, every array of the state, each lie', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runlog-snapshot-count-'));
    await smallWorkload(await openRunQueueOnLog(await openFileLog({ dir, partitions: COUNT_DAMAGES.length, fsync: false })));
    const log = await openFileLog({ dir, fsync: false });
    await saveCountLies(log.snapshots!);
    await log.close();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a restart ignores it and opens as a replay would (read where it lies)', { timeout: 120_000 }, async () => {
    const opened = await openInChild(['file', dir], 110_000);
    assert.deepEqual(
      notIgnored(
        opened,
        COUNT_DAMAGES.map((d) => d.what),
      ),
      [],
    );
  });

  it('runlog verify reports it ignored, Corrupt (its bytes decoded whole), exit 1', { timeout: 120_000 }, async () => {
    const run = await runlogChild(['verify', '--dir', dir, '--json'], { env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=64' } });
    assert.equal(run.code, 1, `exit ${run.code}: ${fatal(run.stderr)}`);
    const report = JSON.parse(run.stdout) as { partitions: { partition: number; snapshots: { verdict: string; reasons: string[] }[] }[] };
    const problems = COUNT_DAMAGES.flatMap(({ what }, partition) => {
      const verdicts = report.partitions.find((p) => p.partition === partition)?.snapshots ?? [];
      const newest = verdicts[0];
      if (newest === undefined) return [`${what}: no verdict`];
      if (newest.verdict !== 'ignored' || !/invalid PartitionState/.test(newest.reasons.join(' ')))
        return [`${what}: ${newest.verdict} ${JSON.stringify(newest.reasons)}`];
      return [];
    });
    assert.deepEqual(problems, []);
  });
});
