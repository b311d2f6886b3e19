/**
 * The store clock (src/queue/store-clock.ts) when the wall clock steps: tests drive a fake
 * wall clock and a fake monotonic clock; `pass` is real time passing (both move), `step`
 * is the wall being stepped (only it moves).
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { type RunQueue } from '../../src/queue/run-queue.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { StoreClock } from '../../src/queue/store-clock.ts';
import type { RunQueueOptions } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { assertReplayEqualsLive, refused } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const HOUR = 3_600_000;
const WORK = { tenant: 'acme', thread: 't1', agent: 'build', input: 'x' };
const TAKE = { agents: ['build'], ttlMs: 1_000 };

class Clocks {
  wallMs = 1_700_000_000_000;
  monotonicMs = 5_000;
  readonly wall = (): number => this.wallMs;
  readonly monotonic = (): number => this.monotonicMs;
  /** Real time passes: both clocks move. */
  pass(ms: number): void {
    this.wallMs += ms;
    this.monotonicMs += ms;
  }
  /** The wall clock is stepped: only it moves. */
  step(ms: number): void {
    this.wallMs += ms;
  }
}

interface Fixture {
  queue: RunQueue;
  log: EventLog;
  clocks: Clocks;
  warnings: RunlogWarning[];
}

async function queueOn(t: TestContext, log?: EventLog, clocks = new Clocks(), options: Partial<RunQueueOptions> = {}): Promise<Fixture> {
  const warnings: RunlogWarning[] = [];
  const theLog = log ?? (await openMemoryLog({ partitions: 2 }));
  const queue = await openRunQueueOnLog(theLog, {
    clock: clocks.wall,
    monotonicClock: clocks.monotonic,
    onWarning: (warning) => warnings.push(warning),
    ...options,
  });
  onCleanup(t, () => queue.stop());
  return { queue, log: theLog, clocks, warnings };
}

/** Events' `at` never decrease on a partition. */
async function assertTimesNonDecreasing(log: EventLog): Promise<void> {
  for (let p = 0; p < log.partitions; p++) {
    const times: number[] = [];
    for await (const record of log.read(p, 0n)) if (record.value !== null) times.push(decodeEvent(record.value).at);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      `partition ${p}: event times went backwards`,
    );
  }
}

function clockSteps(warnings: RunlogWarning[]): string[] {
  return warnings.filter((w) => w.code === 'RUNLOG_CLOCK_STEP').map((w) => w.message);
}

describe('store clock: the wall clock steps back 3 h', () => {
  it("a dead worker's 1 s lease expires after 1 s of monotonic time, not earlier", async (t) => {
    const { queue, log, clocks, warnings } = await queueOn(t);
    await queue.submit(WORK);
    assert.ok(await queue.take({ ...TAKE, holder: 'dead' }));
    clocks.step(-3 * HOUR);
    clocks.pass(900);
    assert.equal(await queue.take({ ...TAKE, holder: 'alive' }), null, 'the lease expired early');
    clocks.pass(200);
    const taken = await queue.take({ ...TAKE, holder: 'alive' });
    assert.equal(taken?.lease.holder, 'alive', 'the lease was held past its 1 s');
    assert.equal(taken.lease.epoch, 2);
    assert.equal(clockSteps(warnings).length, 1);
    assert.match(clockSteps(warnings)[0]!, /stepped back by 3\.00 h/);
    assert.equal((await queue.metrics()).warnings.RUNLOG_CLOCK_STEP, 1);
    await assertTimesNonDecreasing(log);
    await assertReplayEqualsLive(queue);
  });

  it('a 1 s retry backoff passes after 1 s of monotonic time, not earlier', async (t) => {
    const { queue, clocks } = await queueOn(t);
    await queue.submit(WORK);
    const first = (await queue.take({ ...TAKE, ttlMs: 60_000, holder: 'w' }))!;
    await queue.startAttempt(first.lease, 'run-1');
    assert.equal(await queue.yield(first.lease, { kind: 'retry', error: 'flaky', delayMs: 1_000 }), true);
    clocks.step(-3 * HOUR);
    clocks.pass(900);
    assert.equal(await queue.take({ ...TAKE, holder: 'w' }), null, 'the backoff passed early');
    clocks.pass(200);
    assert.ok(await queue.take({ ...TAKE, holder: 'w' }), 'the 1 s backoff did not pass');
    assert.equal((await queue.metrics()).warnings.RUNLOG_CLOCK_STEP, 1);
  });

  it('a deadline of wall + 60 s does not expire the entry at once, and expires it after 60 s', async (t) => {
    const { queue, clocks } = await queueOn(t);
    await queue.submit({ ...WORK, thread: 'before' }); // an event stamped before the step
    clocks.step(-3 * HOUR);
    clocks.pass(10);
    const late = await queue.submit({ ...WORK, thread: 'late', deadline: clocks.wallMs + 60_000 });
    const soon = await queue.submit({ ...WORK, thread: 'soon', deadline: clocks.wallMs + 60_000 });
    assert.equal(await queue.expireOverdue(), 0, 'the entry expired at once, unrun');
    clocks.pass(30_000);
    const taken = await queue.takeEntry('acme', soon.entryId, { holder: 'w', ttlMs: 1_000 });
    assert.equal(taken?.entry.entryId, soon.entryId, 'an entry 30 s before its deadline could not be taken');
    await queue.startAttempt(taken.lease, 'run-1');
    assert.equal(await queue.expireOverdue(), 0);
    clocks.pass(31_000);
    assert.equal(await queue.expireOverdue(), 1, 'the deadline was held past its 60 s');
    assert.equal((await queue.entry('acme', late.entryId)).outcome, 'expired');
  });

  it('a notBefore of wall + 1 s is takeable after 1 s, not 3 h', async (t) => {
    const { queue, clocks } = await queueOn(t);
    await queue.submit({ ...WORK, thread: 'before' });
    clocks.step(-3 * HOUR);
    await queue.submit({ ...WORK, thread: 'delayed', agent: 'later', notBefore: clocks.wallMs + 1_000 });
    clocks.pass(900);
    assert.equal(await queue.take({ ...TAKE, agents: ['later'], holder: 'w' }), null);
    clocks.pass(200);
    assert.ok(await queue.take({ ...TAKE, agents: ['later'], holder: 'w' }));
  });
});

describe('store clock: the wall clock jumps forward 2 h for a while', () => {
  it('a sweep does not prune a result closed 1 s earlier; the jump and its undoing are reported', async (t) => {
    const { queue, log, clocks, warnings } = await queueOn(t);
    const ticket = await queue.submit(WORK);
    const taken = (await queue.take({ ...TAKE, holder: 'w' }))!;
    await queue.close(taken.lease, { status: 'succeeded', result: 'done' });
    clocks.pass(1_000);
    clocks.step(2 * HOUR);
    assert.deepEqual(await queue.sweep({ ticketLifetimeMs: HOUR }), { expired: 0, pruned: 0 }, 'a result 1 s old was pruned');
    assert.equal((await queue.entry('acme', ticket.entryId)).outcome, 'succeeded');
    assert.equal((await queue.metrics()).warnings.RUNLOG_CLOCK_STEP, 1);
    assert.match(clockSteps(warnings)[0]!, /stepped forward by 2\.00 h/);

    clocks.pass(60_000);
    clocks.step(-2 * HOUR);
    assert.equal((await queue.sweep({ ticketLifetimeMs: HOUR })).pruned, 0);
    assert.equal((await queue.metrics()).warnings.RUNLOG_CLOCK_STEP, 2);
    assert.match(clockSteps(warnings)[1]!, /stepped back by 2\.00 h; store time follows the wall again/);
    assert.ok(Math.abs(queue.now() - clocks.wallMs) <= 1_000, 'store time did not rejoin the wall');

    clocks.pass(HOUR);
    assert.equal((await queue.sweep({ ticketLifetimeMs: HOUR })).pruned, 1, 'the ticket outlived its lifetime');
    await assertTimesNonDecreasing(log);
    await assertReplayEqualsLive(queue);
  });

  it('a lease taken during the jump lasts its ttl', async (t) => {
    const { queue, clocks } = await queueOn(t);
    await queue.submit(WORK);
    clocks.step(2 * HOUR);
    assert.ok(await queue.take({ ...TAKE, holder: 'dead' }));
    clocks.pass(900);
    assert.equal(await queue.take({ ...TAKE, holder: 'alive' }), null);
    clocks.pass(200);
    assert.equal((await queue.take({ ...TAKE, holder: 'alive' }))?.lease.holder, 'alive');
  });
});

describe('store clock: following the wall', () => {
  function clockOn(clocks: Clocks, floorAt = 0, stepToleranceMs = 1_000): { clock: StoreClock; warnings: RunlogWarning[] } {
    const warnings: RunlogWarning[] = [];
    const clock = new StoreClock({ wall: clocks.wall, monotonic: clocks.monotonic, stepToleranceMs }, floorAt, (w) => warnings.push(w));
    return { clock, warnings };
  }

  it('follows a wall slewed within the tolerance, and never runs backwards', () => {
    const clocks = new Clocks();
    const { clock, warnings } = clockOn(clocks);
    assert.equal(clock.now(), clocks.wallMs);
    clocks.pass(10_000);
    clocks.step(800); // NTP slewing forward: within the tolerance
    assert.equal(clock.now(), clocks.wallMs);
    const before = clock.now();
    clocks.step(-600); // slewing back: store time holds rather than go back
    assert.equal(clock.now(), before);
    clocks.pass(700);
    assert.equal(clock.now(), clocks.wallMs);
    assert.deepEqual(warnings, []);
  });

  it('a step beyond the tolerance flows at the monotonic rate and slews toward the wall at 500 ppm', () => {
    const clocks = new Clocks();
    const { clock, warnings } = clockOn(clocks);
    const at = clock.now();
    clocks.step(2 * HOUR);
    assert.equal(clock.now(), at);
    clocks.pass(1_000_000);
    assert.equal(clock.now(), at + 1_000_000 + 500);
    assert.equal(warnings.length, 1);
  });

  it('the tolerance is an option: a 5 s step within a 10 s tolerance is followed silently', () => {
    const clocks = new Clocks();
    const { clock, warnings } = clockOn(clocks, 0, 10_000);
    clock.now();
    clocks.step(5_000);
    assert.equal(clock.now(), clocks.wallMs);
    assert.deepEqual(warnings, []);
  });

  it('answers whole milliseconds from a fractional monotonic clock', () => {
    const clocks = new Clocks();
    const { clock } = clockOn(clocks);
    clocks.step(-HOUR);
    clocks.monotonicMs += 0.37;
    clock.now();
    clocks.monotonicMs += 1_000.5;
    assert.ok(Number.isInteger(clock.now()));
  });

  it('starts at the latest event time when the wall is behind it, and reports that', () => {
    const clocks = new Clocks();
    const latest = clocks.wallMs + 3 * HOUR;
    const { clock, warnings } = clockOn(clocks, latest);
    assert.equal(clock.now(), latest);
    clocks.pass(1_000);
    assert.equal(clock.now(), Math.floor(latest + 1_000 - 0.5));
    assert.match(warnings[0]!.message, /3\.00 h before the latest event time/);
  });

  it('a lone wall clock is the monotonic clock too: moved back, store time holds and then flows with it', async (t) => {
    const clocks = new Clocks();
    const warnings: RunlogWarning[] = [];
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }), {
      clock: clocks.wall,
      onWarning: (w) => warnings.push(w),
    });
    onCleanup(t, () => queue.stop());
    await queue.submit(WORK);
    assert.ok(await queue.take({ ...TAKE, holder: 'dead' }));
    clocks.wallMs -= 3 * HOUR;
    assert.equal(await queue.take({ ...TAKE, holder: 'alive' }), null);
    clocks.wallMs += 1_100;
    assert.equal((await queue.take({ ...TAKE, holder: 'alive' }))?.lease.holder, 'alive');
    assert.equal(warnings.length, 1);
  });
});

describe('store clock: restart after a backward step', () => {
  it('store time continues from the latest event and flows: a dead lease expires after its ttl', async (t) => {
    const dir = await scratchDir(t, 'runlog-store-clock-');
    const first = new Clocks();
    const before = await openRunQueueOnLog(await openFileLog({ dir, partitions: 1 }), {
      clock: first.wall,
      monotonicClock: first.monotonic,
    });
    await before.submit(WORK);
    const dead = (await before.take({ ...TAKE, holder: 'dead' }))!;
    await before.stop();

    const second = new Clocks(); // a new process: another monotonic origin; the wall stepped back 3 h
    second.wallMs = first.wallMs - 3 * HOUR;
    second.monotonicMs = 42;
    const { queue, log, warnings } = await queueOn(t, await openFileLog({ dir }), second);
    assert.equal(queue.now(), dead.lease.expiresAt - 1_000);
    assert.equal(clockSteps(warnings).length, 1);
    assert.equal((await queue.metrics()).warnings.RUNLOG_CLOCK_STEP, 1);
    second.pass(1_100);
    assert.equal((await queue.take({ ...TAKE, holder: 'alive' }))?.lease.holder, 'alive', 'the dead lease was held past its ttl');
    await assertTimesNonDecreasing(log);
  });
});

describe('store clock: bad clocks and options', () => {
  for (const [label, bad] of [
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['"x"', 'x'],
    ['-1', -1],
  ] as const) {
    it(`a clock answering ${label} is InvalidArgument naming the clock; nothing is written`, async (t) => {
      const clocks = new Clocks();
      let answer: unknown = null;
      const wall = (): number => (answer === null ? clocks.wallMs : (answer as number));
      const { queue, log } = await queueOn(t, undefined, clocks, { clock: wall });
      await queue.submit(WORK);
      answer = bad;
      await refused(log, 'InvalidArgument', () => queue.submit({ ...WORK, thread: 't2' }));
      await refused(log, 'InvalidArgument', () => queue.take({ ...TAKE, holder: 'w' }));
      await assert.rejects(queue.submit(WORK), (error: unknown) => {
        assert.ok(isRunlogError(error, 'InvalidArgument'));
        assert.ok(error.message.includes('clock') && error.message.includes(label), error.message);
        return true;
      });
    });
  }

  it('a bad monotonic clock, or a clock that throws, is InvalidArgument naming it', async (t) => {
    const clocks = new Clocks();
    let monotonic: () => number = clocks.monotonic;
    const { queue, log } = await queueOn(t, undefined, clocks, { monotonicClock: () => monotonic() });
    monotonic = () => NaN;
    await refused(log, 'InvalidArgument', () => queue.submit(WORK));
    await assert.rejects(queue.submit(WORK), /monotonicClock option returned NaN/);
    monotonic = () => {
      throw new Error('boom');
    };
    await assert.rejects(queue.submit(WORK), /monotonicClock option threw: Error: boom/);
  });

  it('opening with a clock answering NaN is InvalidArgument naming the clock', async () => {
    const log = await openMemoryLog({ partitions: 1 });
    await assert.rejects(openRunQueueOnLog(log, { clock: () => NaN }), (error: unknown) => {
      assert.ok(isRunlogError(error, 'InvalidArgument'));
      assert.match(error.message, /the clock option returned NaN/);
      return true;
    });
    assert.equal(await log.endOffset(0), 0n);
  });

  for (const [name, value] of [
    ['monotonicClock', 5],
    ['clockStepToleranceMs', -1],
    ['clockStepToleranceMs', 1.5],
    ['onWarning', 'stderr'],
  ] as const) {
    it(`option ${name}: ${String(value)} is InvalidArgument naming it`, async () => {
      await assert.rejects(openRunQueue({ log: { kind: 'memory' }, [name]: value } as RunQueueOptions), (error: unknown) => {
        assert.ok(isRunlogError(error, 'InvalidArgument'));
        assert.ok(error.message.includes(name), error.message);
        return true;
      });
    });
  }

  it('without onWarning, a step goes to process.emitWarning with code RUNLOG_CLOCK_STEP', async (t) => {
    const clocks = new Clocks();
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }), { clock: clocks.wall, monotonicClock: clocks.monotonic });
    onCleanup(t, () => queue.stop());
    const warned = new Promise<Error & { code?: string }>((resolve) => process.once('warning', resolve));
    clocks.step(-HOUR);
    queue.now();
    const warning = await warned;
    assert.equal(warning.code, 'RUNLOG_CLOCK_STEP');
    assert.match(warning.message, /stepped back by 1\.00 h/);
  });
});

describe('store clock: a wall that stops or runs at the wrong rate, read often', () => {
  const TOLERANCE = 1_000;
  /** The most store time may be off from monotonic time over `ms`: the tolerance plus 500 ppm. */
  const allowance = (ms: number): number => TOLERANCE + 500e-6 * ms;
  const READ_EVERY = 100;

  /** Real time passes in steps of READ_EVERY while the wall runs at `rate`; a command reads the clock each time. */
  function run(clocks: Clocks, rate: number, ms: number, read: () => unknown, every = READ_EVERY): void {
    for (let t = 0; t < ms; t += every) {
      clocks.monotonicMs += every;
      clocks.wallMs += every * rate;
      read();
    }
  }

  for (const every of [100, 2_000]) {
    it(`a stopped wall read every ${every} ms: a dead worker's 1 s lease expires on monotonic time, and the stop is reported once`, async (t) => {
      const { queue, clocks, warnings } = await queueOn(t);
      await queue.submit(WORK);
      assert.ok(await queue.take({ ...TAKE, holder: 'dead' }));
      const at = queue.now();
      run(clocks, 0, 600_000, () => queue.now(), every);
      const advanced = queue.now() - at;
      assert.ok(advanced >= 600_000 - allowance(600_000) && advanced <= 600_000, `store time advanced ${advanced} ms in 600 s`);
      assert.equal((await queue.take({ ...TAKE, holder: 'alive' }))?.lease.holder, 'alive', "the dead worker's lease still blocks");
      assert.equal(clockSteps(warnings).length, 1, clockSteps(warnings).join('\n'));
      assert.match(clockSteps(warnings)[0]!, every < TOLERANCE ? /drifted behind the monotonic clock/ : /stepped back by 2\.000 s/);
      assert.equal((await queue.metrics()).warnings.RUNLOG_CLOCK_STEP, 1);
    });
  }

  for (const rate of [0, 0.5, 2, 10]) {
    it(`a wall at ${rate}x: a 60 s lease lasts 60 s of monotonic time, and it is reported once`, async (t) => {
      const { queue, log, clocks, warnings } = await queueOn(t);
      await queue.submit(WORK);
      assert.ok(await queue.take({ ...TAKE, ttlMs: 60_000, holder: 'w1' }));
      let lasted = 0;
      while (lasted < 600_000) {
        run(clocks, rate, READ_EVERY, () => queue.now());
        lasted += READ_EVERY;
        if (await queue.take({ ...TAKE, ttlMs: 60_000, holder: 'w2' })) break;
      }
      assert.ok(Math.abs(lasted - 60_000) <= allowance(60_000) + READ_EVERY, `the 60 s lease lasted ${lasted} ms of monotonic time`);
      assert.equal(clockSteps(warnings).length, 1, clockSteps(warnings).join('\n'));
      await assertTimesNonDecreasing(log);
      await assertReplayEqualsLive(queue);
    });
  }

  for (const ppm of [200, -200]) {
    it(`a wall slewed at ${ppm} ppm for 2 h is followed without a warning`, () => {
      const clocks = new Clocks();
      const warnings: RunlogWarning[] = [];
      const clock = new StoreClock({ wall: clocks.wall, monotonic: clocks.monotonic, stepToleranceMs: TOLERANCE }, 0, (w) =>
        warnings.push(w),
      );
      let behind = 0;
      run(clocks, 1 + ppm * 1e-6, 2 * HOUR, () => (behind = Math.max(behind, clocks.wallMs - clock.now())));
      assert.deepEqual(warnings, []);
      assert.ok(behind <= 1, `store time fell ${behind} ms behind the wall`); // only the floor to whole ms
    });
  }

  it('a wall that stops after a day of uptime is caught within the tolerance, not 500 ppm of the day', () => {
    const clocks = new Clocks();
    const warnings: RunlogWarning[] = [];
    const clock = new StoreClock({ wall: clocks.wall, monotonic: clocks.monotonic, stepToleranceMs: TOLERANCE }, 0, (w) =>
      warnings.push(w),
    );
    for (let hour = 0; hour < 24; hour++) {
      clocks.pass(HOUR);
      clock.now();
    }
    run(clocks, 0, 2 * TOLERANCE, () => clock.now());
    assert.equal(warnings.length, 1, 'a stopped wall went unnoticed for 2 s');
  });

  it('a frozen wall that resumes after a real step back is followed again once store time has slewed to it', () => {
    const clocks = new Clocks();
    const warnings: RunlogWarning[] = [];
    const clock = new StoreClock({ wall: clocks.wall, monotonic: clocks.monotonic, stepToleranceMs: TOLERANCE }, 0, (w) =>
      warnings.push(w),
    );
    run(clocks, 0, 3_000, () => clock.now()); // stops for 3 s, then runs again: 3 s behind for good
    run(clocks, 1, 5 * HOUR, () => clock.now());
    assert.equal(warnings.length, 2, warnings.map((w) => w.message).join('\n'));
    assert.match(warnings[1]!.message, /agrees with store time again after .*; store time follows the wall again/);
    clocks.step(500); // within the tolerance once more
    assert.equal(clock.now(), clocks.wallMs);
  });
});
