/**
 * The error text a worker records for a failed attempt is text the queue takes: bounded,
 * and well-formed however the handler's error reads. A cut through a surrogate pair, or a
 * lone surrogate in a message, used to be refused by the queue: the attempt went
 * unrecorded, the entry waited out its lease and the failure was logged as worker-error.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { clipText } from '../../src/clip-text.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { WorkerEvent } from '../../src/worker/types.ts';
import { Worker } from '../../src/worker/worker.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { ManualTimers } from './fixtures.ts';

const MAX_ERROR_CHARS = 8 * 1024;
const EMOJI = '\u{1F600}';

/** Runs an entry of two attempts whose handler throws `thrown` both times: retried, then parked. */
async function failTwice(t: TestContext, thrown: unknown) {
  const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }), { clock: new FakeClock().read });
  t.after(() => queue.stop());
  const events: WorkerEvent[] = [];
  const worker = new Worker(queue, {
    timers: new ManualTimers(),
    backoff: () => 0,
    onEvent: (event) => events.push(event),
    logger: () => {},
  });
  worker.handle('billing', () => {
    throw thrown;
  });
  const { entryId } = await queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x', maxAttempts: 2 });
  assert.equal(await worker.runDue('billing'), 1);
  const retried = await queue.entry('acme', entryId);
  assert.equal(await worker.runDue('billing'), 1);
  return { events, retried, parked: await queue.entry('acme', entryId) };
}

/** The retry was taken (its lease given back at once) and the parked entry records `error`. */
function assertRecorded(run: Awaited<ReturnType<typeof failTwice>>, error: string): void {
  assert.deepEqual(
    run.events.map((event) => event.type),
    ['retried', 'parked'],
  );
  assert.equal(run.retried.lease, null, 'the retry gave the lease back');
  assert.equal(run.parked.outcome, 'failed');
  assert.equal(run.parked.attempts.length, 2);
  assert.equal(run.parked.error, error);
  for (const event of run.events) assert.equal((event as { error?: string }).error, error);
}

describe('the error text a worker records', () => {
  it('is cut at the bound without splitting a surrogate pair', async (t) => {
    const head = `Error: ${'a'.repeat(MAX_ERROR_CHARS - 8)}`; // the emoji's pair straddles the cut
    const run = await failTwice(t, new Error(`${'a'.repeat(MAX_ERROR_CHARS - 8)}${EMOJI} tail`));
    assertRecorded(run, `${head}…`);
    assert.ok(run.parked.error!.length <= MAX_ERROR_CHARS);
  });

  it('keeps a pair that fits whole before the cut', async (t) => {
    const run = await failTwice(t, new Error(`${'a'.repeat(MAX_ERROR_CHARS - 10)}${EMOJI} tail`));
    assertRecorded(run, `Error: ${'a'.repeat(MAX_ERROR_CHARS - 10)}${EMOJI}…`);
  });

  it("makes a lone surrogate in an Error's message U+FFFD", async (t) => {
    const run = await failTwice(t, new Error('bad \uD800 text \uDC00'));
    assertRecorded(run, 'Error: bad \uFFFD text \uFFFD');
  });

  it('makes a lone surrogate in a thrown non-Error value U+FFFD', async (t) => {
    const run = await failTwice(t, Symbol('bad \uD83D'));
    assertRecorded(run, 'the handler threw a non-Error value: Symbol(bad \uFFFD)');
  });

  it('describes an Error whose message getter throws, rather than failing the run', async (t) => {
    const error = new Error('x');
    Object.defineProperty(error, 'message', {
      get: () => {
        throw new Error('getter');
      },
    });
    const run = await failTwice(t, error);
    assert.deepEqual(
      run.events.map((event) => event.type),
      ['retried', 'parked'],
    );
    assert.match(run.parked.error!, /^the handler threw .*, whose name or message could not be read$/);
  });
});

describe('clipText', () => {
  it('answers text within the bound as is, and cuts longer text to the bound with "…"', () => {
    assert.equal(clipText('abc', 3), 'abc');
    assert.equal(clipText('abcd', 3), 'ab…');
  });

  it('never ends on the first half of a surrogate pair', () => {
    assert.equal(clipText(`ab${EMOJI}cd`, 4), 'ab…');
    assert.equal(clipText(`a${EMOJI}cd`, 4), `a${EMOJI}…`);
    for (let max = 1; max < 12; max++) {
      const cut = clipText(EMOJI.repeat(6), max);
      assert.ok(cut.length <= max, `${max}: ${cut.length} units`);
      assert.ok((cut as unknown as { isWellFormed(): boolean }).isWellFormed(), `${max}: a lone surrogate`);
    }
  });
});
