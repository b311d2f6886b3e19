/**
 * The file log's append of records runlog built itself (event-log.ts: APPEND_BUILT), which the
 * queue's group commit uses instead of `append` to skip the argument checks of records it built
 * and checked itself. On a real file log: it appends as `append` does (offsets in call order,
 * interleaved with `append`'s, read back after a reopen), a closed log refuses it with Stopped,
 * and `append` itself still refuses a bad record, writing nothing. A RunQueue over the file log
 * writes its groups through it (counted by a wrapper passing it on to the real log).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { APPEND_BUILT, type AppendRecord, type EventLog } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { allEvents } from '../contract/fixtures.ts';
import { collect, rec, text } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

describe('file log: the append of records runlog built (APPEND_BUILT)', () => {
  it('appends as append does: offsets in call order, interleaved with append, kept across a reopen', async (t) => {
    const dir = await scratchDir(t, 'runlog-append-built-');
    const log = await openFileLog({ dir, partitions: 2 });
    const appendBuilt = log[APPEND_BUILT]!.bind(log);
    const answers = await Promise.all([
      appendBuilt(1, [rec('a', '1'), rec('b', null)]),
      log.append(1, [rec('c', '3')]),
      appendBuilt(1, [rec('d', '4')]),
      appendBuilt(0, [rec('x', '9')]),
    ]);
    assert.deepEqual(answers, [[0n, 1n], [2n], [3n], [0n]]);
    assert.deepEqual(await appendBuilt(1, []), []);
    await log.close();
    await assert.rejects(appendBuilt(1, [rec('e', '5')]), (e) => isRunlogError(e, 'Stopped'));

    const again = await openFileLog({ dir });
    onCleanup(t, () => again.close());
    const read = await collect(again.read(1, 0n));
    assert.deepEqual(
      read.map((r) => [r.offset, r.key, text(r)]),
      [
        [0n, 'a', '1'],
        [1n, 'b', null],
        [2n, 'c', '3'],
        [3n, 'd', '4'],
      ],
    );
  });

  it('append itself still refuses a bad record and writes nothing', async (t) => {
    const dir = await scratchDir(t, 'runlog-append-built-');
    const log = await openFileLog({ dir, partitions: 1 });
    onCleanup(t, () => log.close());
    const bad = [rec('ok', '1'), { key: 'bad', value: 'not bytes' } as unknown as AppendRecord];
    await assert.rejects(log.append(0, bad), (e) => isRunlogError(e, 'InvalidArgument') && /records\[1\]\.value/.test(e.message));
    assert.equal(await log.endOffset(0), 0n);
  });

  it('a RunQueue over the file log writes its groups through it', async (t) => {
    const dir = await scratchDir(t, 'runlog-append-built-');
    const log = await openFileLog({ dir, partitions: 1 });
    let built = 0;
    let plain = 0;
    const counted: EventLog = wrapLog(log, {
      append: (partition: number, records: readonly AppendRecord[]) => {
        plain++;
        return log.append(partition, records);
      },
      [APPEND_BUILT]: (partition: number, records: readonly AppendRecord[]) => {
        built++;
        return log[APPEND_BUILT]!(partition, records);
      },
    });
    const queue = await openRunQueueOnLog(counted);
    onCleanup(t, () => queue.stop());
    const ticket = await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'billing', input: 'x' });
    assert.ok(built >= 1, `${built} appends of built records`);
    assert.equal(plain, 0);
    const submitted = (await allEvents(log)).filter((e) => e.type === 'Submitted').map((e) => e.entryId);
    assert.deepEqual(submitted, [ticket.entryId]);
  });
});
