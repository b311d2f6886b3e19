/** The open-loop load of the latency runs: submits at a fixed rate whatever the queue answers. */
import type { RunQueueApi } from '../src/queue/types.ts';

export interface OpenLoop {
  tenant: string;
  agent: string;
  /** Entry n goes on thread `${threadPrefix}${n}` with input "n". */
  threadPrefix: string;
  perSecond: number;
  durationMs: number;
  /** The clock submit times are read from (the run's own: monotonic in process, epoch across processes). */
  clock: () => number;
}

/** Submits at `perSecond` (checked every millisecond) for `durationMs`, recording each entry's submit time. */
export async function generate(
  queue: RunQueueApi,
  load: OpenLoop,
  submittedAt: Map<number, number>,
): Promise<{ submitted: number; seconds: number }> {
  const started = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  let n = 0;
  for (let now = started; now - started < load.durationMs; now = performance.now()) {
    const due = Math.floor(((now - started) / 1000) * load.perSecond);
    for (; n < due; n++) {
      submittedAt.set(n, load.clock());
      const submit = queue.submit({ tenant: load.tenant, thread: `${load.threadPrefix}${n}`, agent: load.agent, input: String(n) });
      inFlight.add(submit);
      void submit.finally(() => inFlight.delete(submit));
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  return { submitted: n, seconds };
}
