/**
 * A small day of a real RunQueue (memory log, fake store clock) whose numbers the shipped
 * projections' tests know by heart:
 *   T0        acme submits A (order-1, billing) and B (order-2, email); globex submits C (inv-1, billing)
 *   T0+1000   A taken, attempt 1 starts (A waited 1000 ms)
 *   T0+3000   A retried: "Error: timeout after 30000 ms" (ran 2000 ms)
 *   T0+3500   A taken again, attempt 2 starts
 *   T0+7500   A closes failed: "Error: timeout after 15000 ms" (ran 4000 ms); C taken, attempt 1 starts (C waited 7500 ms)
 *   T0+7750   C closes succeeded (ran 250 ms); B is cancelled (never ran)
 */
import type { TestContext } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';

export interface Scenario {
  log: EventLog;
  queue: RunQueue;
  clock: FakeClock;
  t0: number;
  a: string;
  b: string;
  c: string;
}

export async function scenario(t: TestContext, log?: EventLog): Promise<Scenario> {
  const clock = new FakeClock();
  const t0 = clock.nowMs;
  const theLog = log ?? (await openMemoryLog({ partitions: 4 }));
  const queue = await openRunQueueOnLog(theLog, { clock: clock.read });
  onCleanup(t, () => queue.stop());
  const submit = (tenant: string, thread: string, agent: string) => queue.submit({ tenant, thread, agent, input: '{}' });
  const a = (await submit('acme', 'order-1', 'billing')).entryId;
  const b = (await submit('acme', 'order-2', 'email')).entryId;
  const c = (await submit('globex', 'inv-1', 'billing')).entryId;
  const take = async (tenant: string) => (await queue.take({ agents: ['billing'], tenants: [tenant], holder: 'w', ttlMs: 60_000 }))!.lease;
  clock.advance(1_000);
  let lease = await take('acme');
  await queue.startAttempt(lease, 'run-a1');
  clock.advance(2_000);
  await queue.yield(lease, { kind: 'retry', error: 'Error: timeout after 30000 ms', delayMs: 0 });
  clock.advance(500);
  lease = await take('acme');
  await queue.startAttempt(lease, 'run-a2');
  clock.advance(4_000);
  await queue.close(lease, { status: 'failed', error: 'Error: timeout after 15000 ms' });
  lease = await take('globex');
  await queue.startAttempt(lease, 'run-c1');
  clock.advance(250);
  await queue.close(lease, { status: 'succeeded', result: 'ok' });
  await queue.cancel('acme', b, 'not needed');
  return { log: theLog, queue, clock, t0, a, b, c };
}
