/** The one retrier: bail, tries, time, cap, jitter bounds, abort; the sleep and the random source are injected, no timing is asserted. */
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import { Backoff, retry, sleep, type RetryOptions, type SleepOptions } from '../../src/retry.ts';

/** A sleep that records the pauses asked and returns at once (or rejects as the real one does once the signal aborted). */
function recordingSleep(): { pauses: number[]; sleep: (ms: number, options: SleepOptions) => Promise<void> } {
  const pauses: number[] = [];
  return {
    pauses,
    sleep: async (ms, options) => {
      pauses.push(ms);
      if (options.signal?.aborted) throw options.signal.reason;
    },
  };
}

/** An attempt that fails with `errors` in turn, then answers 'done'; `tries` lists its try numbers. */
function failing(...errors: unknown[]): { attempt: (tryNumber: number) => Promise<string>; tries: number[] } {
  const tries: number[] = [];
  return {
    tries,
    attempt: async (tryNumber) => {
      tries.push(tryNumber);
      if (tries.length <= errors.length) throw errors[tries.length - 1];
      return 'done';
    },
  };
}

const noJitter: Pick<RetryOptions, 'jitter'> = { jitter: 0 };

suite('retry', () => {
  it('answers the first success, numbering the tries from 1', async () => {
    const { sleep: fakeSleep, pauses } = recordingSleep();
    const { attempt, tries } = failing(new Error('a'), new Error('b'));
    assert.equal(await retry(attempt, { firstMs: 10, maxMs: 1_000, sleep: fakeSleep, ...noJitter }), 'done');
    assert.deepEqual(tries, [1, 2, 3]);
    assert.deepEqual(pauses, [10, 20]);
  });

  it('bails at once on an error the predicate says is not retriable, throwing it as it is', async () => {
    const { sleep: fakeSleep, pauses } = recordingSleep();
    const fatal = new Error('fatal');
    const { attempt, tries } = failing(new Error('soon'), fatal);
    const retriable = (error: unknown): boolean => (error as Error).message !== 'fatal';
    await assert.rejects(retry(attempt, { firstMs: 1, maxMs: 10, retriable, sleep: fakeSleep }), (error) => error === fatal);
    assert.deepEqual(tries, [1, 2]);
    assert.equal(pauses.length, 1);
  });

  it('throws the last error once the tries are used up', async () => {
    const { sleep: fakeSleep, pauses } = recordingSleep();
    const last = new Error('third');
    const { attempt, tries } = failing(new Error('first'), new Error('second'), last, new Error('never reached'));
    await assert.rejects(retry(attempt, { firstMs: 1, maxMs: 10, tries: 3, sleep: fakeSleep }), (error) => error === last);
    assert.deepEqual(tries, [1, 2, 3]);
    assert.equal(pauses.length, 2);
  });

  it('throws the last error once the time is used up, on the clock it is given', async () => {
    let now = 1_000;
    const fakeSleep = async (ms: number): Promise<void> => void (now += ms);
    const errors = Array.from({ length: 100 }, (_, i) => new Error(`try ${i + 1}`));
    const { attempt, tries } = failing(...errors);
    // Pauses 10, 20, 40: the time (70) has passed 50 after the fourth try.
    await assert.rejects(
      retry(attempt, { firstMs: 10, maxMs: 1_000, forMs: 50, sleep: fakeSleep, now: () => now, ...noJitter }),
      (e) => e === errors[3],
    );
    assert.deepEqual(tries, [1, 2, 3, 4]);
  });

  it('grows the pauses by the factor and never past the cap, also when the cap depends on the error', async () => {
    const { sleep: fakeSleep, pauses } = recordingSleep();
    const errors = Array.from({ length: 8 }, () => new Error('again'));
    await retry(failing(...errors).attempt, { firstMs: 1, maxMs: 50, factor: 3, sleep: fakeSleep, ...noJitter });
    assert.deepEqual(pauses, [1, 3, 9, 27, 50, 50, 50, 50]);

    const soon = Object.assign(new Error('soon'), { soon: true });
    const moved = new Error('moved');
    const { sleep: sleep2, pauses: pauses2 } = recordingSleep();
    const maxMs = (error: unknown): number => ((error as { soon?: boolean }).soon ? 4 : 100);
    await retry(failing(soon, soon, soon, soon, moved, moved, moved).attempt, { firstMs: 1, maxMs, sleep: sleep2, ...noJitter });
    assert.deepEqual(pauses2, [1, 2, 4, 4, 16, 32, 64]);
  });

  it('keeps each pause within ±jitter of its nominal length and under the cap, at both ends of the random source', async () => {
    for (const [random, expected] of [
      [() => 0, [80, 160, 320, 640, 640]], // the low end: nominal × 0.8
      [() => 1 - Number.EPSILON, [120, 240, 480, 800, 800]], // the high end: nominal × 1.2, cut at the cap
      [() => 0.5, [100, 200, 400, 800, 800]],
    ] as const) {
      const { sleep: fakeSleep, pauses } = recordingSleep();
      const errors = Array.from({ length: 5 }, () => new Error('again'));
      await retry(failing(...errors).attempt, { firstMs: 100, maxMs: 800, jitter: 0.2, random, sleep: fakeSleep });
      assert.deepEqual(pauses, expected);
    }
  });

  it('ends on abort with the signal’s reason: before a pause, and during one', async () => {
    const controller = new AbortController();
    const reason = new Error('stopped');
    const { attempt, tries } = failing(new Error('a'), new Error('b'), new Error('c'));
    const abortingSleep = async (_ms: number, options: SleepOptions): Promise<void> => {
      controller.abort(reason);
      if (options.signal?.aborted) throw options.signal.reason;
    };
    await assert.rejects(retry(attempt, { firstMs: 1, maxMs: 10, signal: controller.signal, sleep: abortingSleep }), (e) => e === reason);
    assert.deepEqual(tries, [1]);

    const { attempt: attempt2, tries: tries2 } = failing(new Error('a'));
    await assert.rejects(retry(attempt2, { firstMs: 1, maxMs: 10, signal: AbortSignal.abort(reason) }), (e) => e === reason);
    assert.deepEqual(tries2, [1]);
  });

  it('ends a real pause at once on abort (the default sleep, a pause far longer than the test)', async () => {
    const controller = new AbortController();
    const { attempt } = failing(new Error('a'));
    const running = retry(attempt, { firstMs: 3_600_000, maxMs: 3_600_000, signal: controller.signal });
    setImmediate(() => controller.abort());
    await assert.rejects(running, { name: 'AbortError' });
  });

  it('refuses options that cannot make a backoff', () => {
    assert.throws(() => new Backoff({ firstMs: -1, maxMs: 1 }), RangeError);
    assert.throws(() => new Backoff({ firstMs: 1, maxMs: 1, factor: 0.5 }), RangeError);
    assert.throws(() => new Backoff({ firstMs: 1, maxMs: 1, jitter: 2 }), RangeError);
    assert.throws(() => new Backoff({ firstMs: 1, maxMs: 1, tries: 0 }), RangeError);
  });
});

suite('Backoff', () => {
  it('serves a loop that cannot be one function: after(error) pauses or throws by the same rules', async () => {
    const { sleep: fakeSleep, pauses } = recordingSleep();
    const backoff = new Backoff({ firstMs: 5, maxMs: 100, tries: 3, sleep: fakeSleep, ...noJitter });
    await backoff.after(new Error('one'));
    await backoff.after(new Error('two'));
    assert.equal(backoff.tries, 2);
    const third = new Error('three');
    await assert.rejects(backoff.after(third), (e) => e === third);
    assert.deepEqual(pauses, [5, 10]);
  });
});

suite('sleep', () => {
  it('resolves after a pause, and rejects with the reason once the signal aborts (at once if it already had)', async () => {
    await sleep(1);
    const reason = new Error('why');
    await assert.rejects(sleep(1, { signal: AbortSignal.abort(reason) }), (e) => e === reason);
    const controller = new AbortController();
    const long = sleep(3_600_000, { signal: controller.signal, ref: false });
    controller.abort(reason);
    await assert.rejects(long, (e) => e === reason);
  });
});
