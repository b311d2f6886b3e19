/**
 * The soak's submitter: entry i goes on thread `t<i mod threads>` as the thread's entry
 * number floor(i / threads), with the key `e<i>`. A thread's entries are submitted one after
 * the other (the next once the previous is acknowledged), so their submission order is
 * defined; up to `inFlight` submissions of different threads are under way at once.
 *
 * A submission is acknowledged when submit answers its ticket. One that fails otherwise than by
 * a final refusal (bad arguments, a key reused, auth) is sent again with the same key until it
 * is acknowledged: the key makes the repeat name the same entry if a try before was made
 * durable, so repeating is safe whatever the error said (LogUnavailable, NotOwner, Fenced, a
 * refused connection once the client's own retries ran out). The errors that led to a repeat
 * are counted by code, so the run shows which ones a producer meets. Only a final refusal or
 * `giveUpAt` passing leaves an entry unacknowledged (counted, the first few kept).
 */
import { isRunlogError } from '../../src/errors.ts';
import { retry } from '../../src/retry.ts';
import type { RunQueueApi } from '../../src/queue/types.ts';

export interface SubmitPlan {
  tenant: string;
  agent: string;
  entries: number;
  threads: number;
  inFlight: number;
  /** performance.now() after which a failing submission is given up. */
  giveUpAt: number;
}

export interface Acknowledged {
  /** The entry's number in the run (its key is `e<n>`). */
  n: number;
  thread: string;
  /** Its place among its thread's entries (0 first). */
  index: number;
  entryId: string;
}

export interface SubmitResult {
  acknowledged: Acknowledged[];
  /** Submissions sent again after a failure. */
  retries: number;
  /** Those retries by the error code of the failure (`other`: not a RunlogError). */
  retriedAfter: Record<string, number>;
  /** Entries never acknowledged, and why (the first few). */
  unacknowledged: number;
  refusals: string[];
  seconds: number;
}

export function threadOf(n: number, threads: number): string {
  return `t${n % threads}`;
}

export async function submitAll(queue: RunQueueApi, plan: SubmitPlan, onAcknowledged: (ack: Acknowledged) => void): Promise<SubmitResult> {
  const started = performance.now();
  const result: SubmitResult = { acknowledged: [], retries: 0, retriedAfter: {}, unacknowledged: 0, refusals: [], seconds: 0 };
  const slots = new Slots(plan.inFlight);
  const chains = new Map<string, Promise<boolean>>();
  for (let n = 0; n < plan.entries; n++) {
    const thread = threadOf(n, plan.threads);
    const previous = chains.get(thread) ?? Promise.resolve(true);
    // An entry whose predecessor was never acknowledged is not sent: the thread's order would be unknown.
    const next = previous.then(async (ok) => {
      if (!ok) {
        result.unacknowledged++;
        return false;
      }
      await slots.acquire();
      try {
        const ack = await submitOne(queue, plan, n, result);
        if (ack === null) return false;
        result.acknowledged.push(ack);
        onAcknowledged(ack);
        return true;
      } finally {
        slots.release();
      }
    });
    chains.set(thread, next);
  }
  await Promise.all(chains.values());
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

async function submitOne(queue: RunQueueApi, plan: SubmitPlan, n: number, result: SubmitResult): Promise<Acknowledged | null> {
  const thread = threadOf(n, plan.threads);
  const request = { tenant: plan.tenant, thread, agent: plan.agent, input: String(n), key: `e${n}` };
  const repeat = (error: unknown): boolean => {
    if (isFinal(error)) return false;
    result.retries++;
    const code = isRunlogError(error) ? error.code : 'other';
    result.retriedAfter[code] = (result.retriedAfter[code] ?? 0) + 1;
    return true;
  };
  try {
    const forMs = Math.max(0, plan.giveUpAt - performance.now());
    const ticket = await retry(() => queue.submit(request), { firstMs: 100, maxMs: 1_000, forMs, retriable: repeat });
    return { n, thread, index: Math.floor(n / plan.threads), entryId: ticket.entryId };
  } catch (error) {
    result.unacknowledged++;
    if (result.refusals.length < 10) result.refusals.push(`e${n}: ${String(error)}`);
    return null;
  }
}

/** A refusal that a repeat would only get again. */
function isFinal(error: unknown): boolean {
  return FINAL.some((code) => isRunlogError(error, code));
}

const FINAL = ['InvalidArgument', 'SubmissionKeyReused', 'Unauthorized', 'Forbidden', 'Stopped'] as const;

/** A counting semaphore. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(count: number) {
    this.#free = count;
  }

  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
