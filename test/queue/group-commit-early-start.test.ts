/**
 * The group commit's early start (group-commit.ts): on a log of one append at a time, a group
 * that reaches 16 records while nothing is in flight starts at once, in the middle of the turn,
 * and the turn's later commands form the next group. On a real file log, whose appends are
 * counted by a wrapper passing them on: 64 one-record writes in one turn go in two appends (16,
 * then 48, the second only once the first is durable), each write finds its own offsets, dense
 * and in call order, and the records read back in that order; fewer than 16 go in one append at
 * the turn's end; a log of several appends in flight gets one group per turn, as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APPEND_BUILT, type AppendRecord, type EventLog } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { GroupCommit, offsetsOf, type Written } from '../../src/queue/group-commit.ts';
import { collect, rec } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

/** A real file log whose appends are recorded: each append's record count, in call order. */
async function countedLog(
  t: Parameters<typeof scratchDir>[0],
  replace: Partial<EventLog> = {},
): Promise<{ log: EventLog; appends: number[] }> {
  const dir = await scratchDir(t, 'runlog-early-start-');
  const log = await openFileLog({ dir, partitions: 1 });
  onCleanup(t, () => log.close());
  const appends: number[] = [];
  const counted = wrapLog(log, {
    [APPEND_BUILT]: (partition: number, records: readonly AppendRecord[]) => {
      appends.push(records.length);
      return log[APPEND_BUILT]!(partition, records);
    },
    ...replace,
  });
  return { log: counted, appends };
}

const owner = { failed: (): void => undefined, drained: (): void => undefined, awaitsIdle: (): boolean => false };

/** `count` one-record writes made in one turn, then each write's own offset once durable. */
async function writeInOneTurn(
  group: GroupCommit,
  count: number,
  appends: number[],
): Promise<{ offsets: bigint[]; appendsInTurn: number[] }> {
  const written: Written[] = [];
  for (let i = 0; i < count; i++) written.push(group.write([rec(`k${i}`, `v${i}`)]));
  const appendsInTurn = [...appends];
  const offsets = await Promise.all(written.map(async (w) => offsetsOf(await w.durable, w.at, 1)[0]!));
  return { offsets, appendsInTurn };
}

describe('group commit: a group starts early on a log of one append at a time', () => {
  it('64 writes in one turn: 16 start at once, the other 48 once those are durable; offsets dense and in call order', async (t) => {
    const { log, appends } = await countedLog(t);
    const group = new GroupCommit(log, 0, owner);
    const { offsets, appendsInTurn } = await writeInOneTurn(group, 64, appends);
    assert.deepEqual(appendsInTurn, [16], 'the first 16 records were appended within the turn');
    assert.deepEqual(appends, [16, 48]);
    assert.deepEqual(
      offsets,
      Array.from({ length: 64 }, (_, i) => BigInt(i)),
    );
    const read = await collect(log.read(0, 0n));
    assert.deepEqual(
      read.map((r) => r.key),
      Array.from({ length: 64 }, (_, i) => `k${i}`),
    );
  });

  it('fewer than 16 records in a turn: one append, at the turn’s end', async (t) => {
    const { log, appends } = await countedLog(t);
    const group = new GroupCommit(log, 0, owner);
    const { offsets, appendsInTurn } = await writeInOneTurn(group, 15, appends);
    assert.deepEqual(appendsInTurn, []);
    assert.deepEqual(appends, [15]);
    assert.deepEqual(
      offsets,
      Array.from({ length: 15 }, (_, i) => BigInt(i)),
    );
  });

  it('a write while a group is in flight joins the next group, however many records it holds', async (t) => {
    const { log, appends } = await countedLog(t);
    const group = new GroupCommit(log, 0, owner);
    const first = writeInOneTurn(group, 16, appends); // in flight from the 16th write on
    const second = await writeInOneTurn(group, 40, appends);
    await first;
    assert.deepEqual(second.appendsInTurn, [16]);
    assert.deepEqual(appends, [16, 40]);
    assert.deepEqual(
      second.offsets,
      Array.from({ length: 40 }, (_, i) => BigInt(16 + i)),
    );
  });

  it('a log of several appends in flight (Kafka’s way) gets one group per turn', async (t) => {
    const { log, appends } = await countedLog(t, { appendsInFlight: 4 });
    const group = new GroupCommit(log, 0, owner);
    const { offsets, appendsInTurn } = await writeInOneTurn(group, 64, appends);
    assert.deepEqual(appendsInTurn, []);
    assert.deepEqual(appends, [64]);
    assert.equal(offsets[63], 63n);
  });
});
