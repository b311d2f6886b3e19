/**
 * The group commit's early start (group-commit.ts, group-pacing.ts) on a real file log, whose
 * appends are counted by a wrapper passing them on. The pacing's clock is one the test moves:
 * each write costs WRITE_MS of it (the thread deciding a command), and an append costs what
 * the wrapper adds as it is called (the thread's part: framing, the write call) and while it is
 * in flight (the device's fsync), so what the pacing measures is the test's to say.
 *
 * - 64 callers in lock step (each writes one record, awaits it, writes the next) on a fast
 *   device: after a first turn in lock step (nothing measured yet), a turn's first 32 records
 *   (half the previous turn's) start at once and the rest form the next group: two even
 *   cohorts, whose groups alternate.
 * - On a slow device (an append longer than a whole turn of deciding) they stay in lock step:
 *   one group of 64 a round. A device that turns slow gathers the cohorts into one again.
 * - Without fsync (an append almost all the thread's own work) they stay in lock step too.
 * - 64 writes in one turn land dense and in call order, each write finding its own offsets.
 * - Fewer than 16 records in a turn (the least that starts early): one append at the turn's end.
 * - A log of several appends in flight (Kafka's way) gets one group per turn.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APPEND_BUILT, type AppendRecord, type EventLog } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { GroupCommit, offsetsOf, type Written } from '../../src/queue/group-commit.ts';
import { GroupPacing } from '../../src/queue/group-pacing.ts';
import { collect, rec } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

const CALLERS = 64;
const WRITE_MS = 0.01;
const owner = { failed: (): void => undefined, drained: (): void => undefined, awaitsIdle: (): boolean => false };

/** A clock the test moves. */
class MovedClock {
  ms = 0;
  readonly now = (): number => this.ms;
}

interface Counted {
  log: EventLog;
  /** Each append's record count, in call order. */
  appends: number[];
  /** What an append adds to the clock as it is called (the thread's part), and while in flight (the device's fsync). */
  device: { handOverMs: number; appendMs: number };
}

/** A real file log whose appends are counted and move `clock` as `device` says (a fast device by default). */
async function countedLog(t: Parameters<typeof scratchDir>[0], clock: MovedClock, replace: Partial<EventLog> = {}): Promise<Counted> {
  const dir = await scratchDir(t, 'runlog-early-start-');
  const real = await openFileLog({ dir, partitions: 1, fsync: false });
  onCleanup(t, () => real.close());
  const appends: number[] = [];
  const device = { handOverMs: 0.01, appendMs: 0.1 };
  const log = wrapLog(real, {
    [APPEND_BUILT]: (partition: number, records: readonly AppendRecord[]) => {
      appends.push(records.length);
      clock.ms += device.handOverMs;
      return real[APPEND_BUILT]!(partition, records).then((offsets) => {
        clock.ms += device.appendMs;
        return offsets;
      });
    },
    ...replace,
  });
  return { log, appends, device };
}

/** CALLERS callers in lock step, each making `rounds` one-record writes one after the other, each write costing WRITE_MS of the clock. */
async function lockStep(group: GroupCommit, clock: MovedClock, rounds: number): Promise<void> {
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      for (let round = 0; round < rounds; round++) {
        clock.ms += WRITE_MS;
        await group.write([rec(`c${caller}-${round}`, 'v')]).durable;
      }
    }),
  );
}

describe('group commit: a group starts early on a log of one append at a time, when that pays', () => {
  it('on a fast device, lock-stepped callers split into two cohorts after a first turn', async (t) => {
    const clock = new MovedClock();
    const { log, appends } = await countedLog(t, clock);
    const group = new GroupCommit(log, 0, owner, new GroupPacing(clock.now));
    await lockStep(group, clock, 6);
    assert.deepEqual(
      appends,
      [64, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32],
      'a first turn in lock step (nothing measured yet), then two cohorts',
    );
  });

  it('on a slow device they stay in lock step; a device that turns slow gathers the cohorts again', async (t) => {
    const clock = new MovedClock();
    const { log, appends, device } = await countedLog(t, clock);
    device.appendMs = 5; // beside a turn of 64 x 0.01 ms
    const group = new GroupCommit(log, 0, owner, new GroupPacing(clock.now));
    await lockStep(group, clock, 4);
    assert.deepEqual(appends, [64, 64, 64, 64]);

    const fast = await countedLog(t, clock);
    const split = new GroupCommit(fast.log, 0, owner, new GroupPacing(clock.now));
    await lockStep(split, clock, 4);
    assert.ok(
      fast.appends.slice(1).every((n) => n < 64),
      `split on the fast device: ${fast.appends.join(', ')}`,
    );
    fast.appends.length = 0;
    fast.device.appendMs = 5;
    await lockStep(split, clock, 6);
    assert.deepEqual(fast.appends.slice(-3), [64, 64, 64], `gathered once the device is slow: ${fast.appends.join(', ')}`);
  });

  it('without fsync (an append is almost all the thread’s own part) they stay in lock step', async (t) => {
    const clock = new MovedClock();
    const { log, appends, device } = await countedLog(t, clock);
    device.handOverMs = 0.05;
    device.appendMs = 0.01;
    const group = new GroupCommit(log, 0, owner, new GroupPacing(clock.now));
    await lockStep(group, clock, 4);
    assert.deepEqual(appends, [64, 64, 64, 64]);
  });

  it('64 writes in one turn, split: offsets dense and in call order, read back in that order', async (t) => {
    const clock = new MovedClock();
    const { log, appends } = await countedLog(t, clock);
    const group = new GroupCommit(log, 0, owner, new GroupPacing(clock.now));
    await lockStep(group, clock, 1); // measured: a turn of 0.63 ms, an append of 0.11 ms
    appends.length = 0;
    const written: Written[] = [];
    for (let i = 0; i < 64; i++) {
      clock.ms += WRITE_MS;
      written.push(group.write([rec(`k${i}`, `v${i}`)]));
    }
    assert.deepEqual(appends, [32], 'the first 32 records were appended within the turn');
    const offsets = await Promise.all(written.map(async (w) => offsetsOf(await w.durable, w.at, 1)[0]!));
    assert.deepEqual(appends, [32, 32]);
    assert.deepEqual(
      offsets,
      Array.from({ length: 64 }, (_, i) => BigInt(64 + i)),
    );
    const read = await collect(log.read(0, 64n));
    assert.deepEqual(
      read.map((r) => r.key),
      Array.from({ length: 64 }, (_, i) => `k${i}`),
    );
  });

  it('fewer than 16 records in a turn: one append, at the turn’s end', async (t) => {
    const clock = new MovedClock();
    const { log, appends } = await countedLog(t, clock);
    const group = new GroupCommit(log, 0, owner, new GroupPacing(clock.now));
    await lockStep(group, clock, 1);
    appends.length = 0;
    const written = Array.from({ length: 15 }, (_, i) => group.write([rec(`k${i}`, 'v')]));
    assert.deepEqual(appends, []);
    await Promise.all(written.map((w) => w.durable));
    assert.deepEqual(appends, [15]);
  });

  it('a log of several appends in flight (Kafka’s way) gets one group per turn', async (t) => {
    const clock = new MovedClock();
    const { log, appends } = await countedLog(t, clock, { appendsInFlight: 4 });
    const group = new GroupCommit(log, 0, owner, new GroupPacing(clock.now));
    await lockStep(group, clock, 4);
    assert.deepEqual(appends, [64, 64, 64, 64]);
  });
});
