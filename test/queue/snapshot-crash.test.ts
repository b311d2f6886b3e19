/**
 * Hostile test of the snapshot policy: a child serving a RunQueue on the file log, snapshots
 * due often, a backlog of open entries growing by batches beside whole lifecycles, is killed
 * with SIGKILL at a random moment (between snapshots, or while one is being written), round
 * after round. After each kill, before anything repairs or snapshots again: each partition's
 * view opened from its latest snapshot (no snapshot ignored) equals the replay from zero, and
 * then every acknowledged submission is there with its input, every acknowledged close closed.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openView } from '../../src/projector/snapshots.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { scratchDir } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { assertAcknowledgedKept, runAndKill, type Acknowledged } from './crash-rounds.ts';

/** Opens each partition from its snapshots as a restart does, and from zero; returns how many opened from a snapshot. */
async function restartEqualsReplay(dir: string): Promise<number> {
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, onWarning: (warning) => warnings.push(warning) });
  let fromSnapshot = 0;
  try {
    for (let p = 0; p < 2; p++) {
      const opened = await openView(log, p, (warning) => warnings.push(warning));
      if (opened.snapshot !== null) fromSnapshot++;
      assert.deepEqual(snapshotView(opened.view), snapshotView(await replayPartition(log, p)), `partition ${p} from ${opened.snapshot}`);
    }
  } finally {
    await log.close();
  }
  const ignored = warnings.filter((warning) => warning.code === 'RUNLOG_SNAPSHOT_IGNORED');
  assert.deepEqual(ignored, [], 'a crash leaves no snapshot a restart must ignore');
  return fromSnapshot;
}

it(
  'SIGKILL between snapshots and during them: a restart from the latest snapshot equals the replay, nothing acknowledged lost',
  { timeout: 600_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-snapshot-crash-');
    const ack: Acknowledged = { submitted: new Map(), closed: new Set() };
    let fromSnapshot = 0;
    for (let round = 0; round < 4; round++) {
      await runAndKill('snapshot-crash-child.ts', dir, round, { after: 100 + Math.floor(Math.random() * 200), counting: 'closed' }, ack);
      fromSnapshot += await restartEqualsReplay(dir);
      const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2, snapshots: false });
      try {
        await assertAcknowledgedKept(queue, ack, tenantOf);
      } finally {
        await queue.stop();
      }
    }
    const backlog = [...ack.submitted.values()].filter((input) => tenantOf(input) === 'backlog').length;
    t.diagnostic(
      `${ack.submitted.size} submissions acknowledged (${backlog} of the backlog), ${ack.closed.size} closes; ${fromSnapshot} of 8 opens from a snapshot`,
    );
    assert.ok(backlog > 2_000 && ack.closed.size >= 400, 'both kinds of work were acknowledged');
    assert.ok(fromSnapshot >= 2, `restarts from a snapshot: ${fromSnapshot} of 8 partition opens`);
  },
);

/** The child's inputs name their tenant: a batch's `r<round>-<batch>-<i>`, a lifecycle's `r<round>-c<caller>-<i>`. */
function tenantOf(input: string): string {
  return /^r\d+-c\d+-\d+$/.test(input) ? 'crash' : 'backlog';
}
