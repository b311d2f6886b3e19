/**
 * The history the audit command tests read (file log: written by audit-writer.ts in another
 * process; Kafka: by a queue in the test's process): four entries that end differently.
 *   failed    acme/order-1, agent mail, every submission field set; attempt 1 retried
 *             ("SMTP 451"), attempt 2 closed failed ("SMTP 550 no such user")
 *   succeeded acme/order-2, agent billing
 *   leased    globex/inv-1, agent pdf, leased by w-pdf, no attempt yet
 *   cancelled globex/inv-2, agent pdf, cancelled before any lease
 * A few ms pass between the steps (the store clock follows the wall clock), so a time
 * between two of them is a point of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunQueueApi } from '../../src/queue/types.ts';

export interface Scenario {
  failed: string;
  succeeded: string;
  leased: string;
  cancelled: string;
}

export const FAILED_DEADLINE = Date.parse('2030-01-01T00:00:00Z');

export async function writeScenario(queue: RunQueueApi): Promise<Scenario> {
  const failed = await queue.submit({
    tenant: 'acme',
    thread: 'order-1',
    agent: 'mail',
    input: 'send receipt',
    key: 'receipt-1',
    priority: 3,
    deadline: FAILED_DEADLINE,
    maxAttempts: 2,
    metadata: { shop: 'eu', batch: '7' },
  });
  await sleep(3);
  const first = (await queue.take({ agents: ['mail'], holder: 'w-mail', ttlMs: 60_000 }))!;
  await queue.startAttempt(first.lease, 'run-1');
  await queue.yield(first.lease, { kind: 'retry', error: 'SMTP 451' });
  await sleep(3);
  const second = (await queue.take({ agents: ['mail'], holder: 'w-mail', ttlMs: 60_000 }))!;
  await queue.startAttempt(second.lease, 'run-2');
  await queue.close(second.lease, { status: 'failed', error: 'SMTP 550 no such user' });
  await sleep(3);
  const succeeded = await queue.submit({ tenant: 'acme', thread: 'order-2', agent: 'billing', input: 'charge card' });
  const billing = (await queue.take({ agents: ['billing'], holder: 'w-billing', ttlMs: 60_000 }))!;
  await queue.startAttempt(billing.lease, 'run-3');
  await queue.close(billing.lease, { status: 'succeeded', result: 'charged' });
  const leased = await queue.submit({ tenant: 'globex', thread: 'inv-1', agent: 'pdf', input: 'render invoice' });
  await queue.take({ agents: ['pdf'], holder: 'w-pdf', ttlMs: 3_600_000 });
  const cancelled = await queue.submit({ tenant: 'globex', thread: 'inv-2', agent: 'pdf', input: 'render credit note' });
  await queue.cancel('globex', cancelled.entryId, 'customer withdrew');
  return { failed: failed.entryId, succeeded: succeeded.entryId, leased: leased.entryId, cancelled: cancelled.entryId };
}
