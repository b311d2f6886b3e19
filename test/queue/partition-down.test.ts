/**
 * A partition whose rebuild cannot succeed says why, and stops trying: its log is damaged on
 * disk between a failed append and the rebuild that follows, the replay finds the damage
 * (Corrupt, not retriable), and the partition is down with that error: in health(), in a
 * RUNLOG_PARTITION_DOWN warning, in every command on it and to every awaitClosed caller.
 * The other partitions serve.
 * A real file log on real files; the append fault by wrapping it.
 */
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { FRAME_HEADER_BYTES } from '../../src/log/file/frame.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { segmentPaths } from '../log/file-damage.ts';
import { FaultyLog } from './faulty-log.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

/** Thread names of `tenant` that land on `partition` of `count`. */
function threadsOn(partition: number, count: number, tenant = 'acme'): string[] {
  const threads: string[] = [];
  for (let i = 0; threads.length < 3; i++) if (partitionOf(tenant, `t${i}`, count) === partition) threads.push(`t${i}`);
  return threads;
}

/** Flips a byte of the first frame's payload of the partition's first segment: its CRC no longer checks. */
async function damageFirstFrame(partitionDir: string): Promise<void> {
  const [first] = await segmentPaths(partitionDir);
  const file = await open(first!, 'r+');
  try {
    const at = SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES;
    const { buffer } = await file.read(Buffer.alloc(1), 0, 1, at);
    await file.write(Buffer.from([buffer[0]! ^ 0xff]), 0, 1, at);
  } finally {
    await file.close();
  }
}

async function queueOnFiles(t: TestContext, partitions = 2) {
  const dir = await scratchDir(t, 'runlog-down-');
  const faulty = new FaultyLog(await openFileLog({ dir, partitions, onWarning: () => {} }));
  const warnings: RunlogWarning[] = [];
  const queue = await openRunQueueOnLog(faulty.wrap(), { clock: new FakeClock().read, onWarning: (w) => void warnings.push(w) });
  onCleanup(t, () => queue.stop());
  return { dir, faulty, queue, warnings };
}

describe('a partition whose rebuild cannot succeed', () => {
  it('is down, says why (health, a warning, every command on it), stops retrying, and the other partitions serve', async (t) => {
    const { dir, faulty, queue, warnings } = await queueOnFiles(t);
    const [a, b, c] = threadsOn(0, 2);
    const [other, otherNext] = threadsOn(1, 2);
    const kept = await queue.submit(submitOf('acme', a!));
    const elsewhere = await queue.submit(submitOf('acme', other!));
    const awaiting = queue.awaitClosed('acme', kept.entryId);
    await damageFirstFrame(join(dir, 'partition-0'));
    faulty.failNextAppend = 0;
    await assert.rejects(queue.submit(submitOf('acme', b!)), /injected append failure/);

    const isWhyDown = (error: unknown): boolean => {
      assert.ok(isRunlogError(error, 'Corrupt'), `Corrupt, got ${String(error)}`);
      assert.equal(error.retriable, false);
      assert.match(error.message, /partition 0/);
      assert.match(error.message, /bad frame/, 'it says what the rebuild found');
      return true;
    };
    await assert.rejects(queue.submit(submitOf('acme', c!)), isWhyDown);
    const readsWhenDown = faulty.reads;
    await assert.rejects(queue.entry('acme', kept.entryId), isWhyDown);
    await assert.rejects(queue.cancel('acme', kept.entryId), isWhyDown);
    await assert.rejects(queue.openEntries('acme', a!), isWhyDown);
    await assert.rejects(awaiting, isWhyDown, 'a caller awaiting a close on it hears why, rather than waiting forever');
    await assert.rejects(queue.awaitClosed('acme', kept.entryId), isWhyDown);
    await assert.rejects(queue.submit(submitOf('acme', c!)), isWhyDown);
    assert.equal(faulty.reads, readsWhenDown, 'a partition down is not rebuilt again');

    const [down, serving] = await queue.health();
    assert.equal(down!.mode, 'down');
    assert.ok(down!.error !== undefined && isWhyDown(down!.error));
    assert.deepEqual(serving, { partition: 1, mode: 'serving' });
    const reported = warnings.filter((w) => w.code === 'RUNLOG_PARTITION_DOWN');
    assert.equal(reported.length, 1, 'one warning: the partition went down');
    assert.match(reported[0]!.message, /partition 0[\s\S]*bad frame/);
    assert.equal((await queue.metrics()).warnings.RUNLOG_PARTITION_DOWN, 1);

    assert.equal((await queue.entry('acme', elsewhere.entryId)).status, 'open');
    assert.equal((await queue.submit(submitOf('acme', otherNext!))).created, true);
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1000 });
    assert.equal(taken?.entry.entryId, elsewhere.entryId, 'take serves the partitions that serve');
  });

  it('fails a take and a takeStarted with why, once every partition is down: not "nothing to take", which a Worker would wait on for ever', async (t) => {
    const { dir, faulty, queue } = await queueOnFiles(t, 1);
    await queue.submit(submitOf('acme', 't1'));
    await damageFirstFrame(join(dir, 'partition-0'));
    faulty.failNextAppend = 0;
    await assert.rejects(queue.submit(submitOf('acme', 't2')), /injected append failure/);
    await assert.rejects(queue.submit(submitOf('acme', 't3')), (error) => isRunlogError(error, 'Corrupt'));
    const isWhyDown = (error: unknown): boolean => isRunlogError(error, 'Corrupt') && /partition 0/.test(error.message);
    await assert.rejects(queue.take({ agents: ['build'], holder: 'w', ttlMs: 1000 }), isWhyDown);
    await assert.rejects(queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: 1000, max: 4 }), isWhyDown);
  });
});
