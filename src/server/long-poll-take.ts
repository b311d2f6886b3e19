/**
 * The long-poll take of one queue: lease the best head, or wait up to `waitMs` for one
 * (src/wire/take-waiting.ts: woken by the queue's onWork, the time nextDueAt names, the end of
 * the wait or the signal: the client went away, or the server closes). When the wait ends with
 * nothing, or the signal aborts, it answers null and holds no lease: a take is only made while
 * the signal is live, and a take's lease is answered (a client gone by then never reads it; the
 * lease runs out).
 */
import type { RunQueueApi, Taken, TakeRequest } from '../queue/types.ts';
import { takeWaiting as waitingFor } from '../wire/take-waiting.ts';

export function takeWaiting(queue: RunQueueApi, request: TakeRequest, waitMs: number, signal: AbortSignal): Promise<Taken | null> {
  const source = {
    take: () => queue.take(request),
    nextDueAt: () => queue.nextDueAt(request.agents, request.tenants),
    now: () => queue.now(),
    onWork: (listener: () => void) => queue.onWork(listener),
    ended: () => signal.aborted,
  };
  return waitingFor(source, waitMs, signal);
}
