/**
 * The malformed-argument rows of the RunQueueApi (every call of a RunQueue, and of the HTTP
 * client, which checks its arguments with the same library checks before any request): one
 * table that bad-arguments.test.ts runs on a RunQueue and test/client/bad-arguments.test.ts
 * on the client, comparing it with the queue.
 */
import type { Lease, RunQueueApi, SubmitRequest, Ticket } from '../../src/queue/types.ts';
import {
  NOT_INTEGERS,
  NOT_NAMES,
  TIMER_OVERFLOW,
  notArrays,
  notBytes,
  notPlainObjects,
  notSignals,
  objectRows,
  rows,
  type Row,
} from './bad-argument-rows.ts';

/** What the rows act on: a submission that works, an open entry's ticket, a current lease. */
export interface Given {
  submit: SubmitRequest;
  open: Ticket;
  lease: Lease;
}

export function runQueueApiRows(queue: RunQueueApi, { submit, open, lease }: Given): Row[] {
  const badLease = (field: string, value: unknown): Lease => ({ ...lease, [field]: value }) as Lease;
  return [
    // submit
    ...objectRows('submit', 'submit request', 'tenant', (request) => queue.submit(request as never)),
    ...['tenant', 'thread', 'agent'].flatMap((field) =>
      rows(`submit ${field}`, field, NOT_NAMES, (value) => queue.submit({ ...submit, [field]: value } as never)),
    ),
    ...rows(
      'submit input',
      'input',
      [
        [42, '42'],
        [null, 'null'],
        [undefined, 'undefined'],
        [new Map(), 'Map(0)'],
        [[1, 2], '[ 1, 2 ]'],
        ['lone \udc00', '"lone \\udc00"'],
        ...notBytes(),
      ],
      (input) => queue.submit({ ...submit, input } as never),
    ),
    ...rows(
      'submit key',
      'key',
      NOT_NAMES.filter(([value]) => value !== null),
      (key) => queue.submit({ ...submit, key } as never),
    ),
    ...rows(
      'submit strategy',
      'strategy',
      [
        ['queue', '"queue"'],
        [1, '1'],
        [null, 'null'],
      ],
      (strategy) => queue.submit({ ...submit, strategy } as never),
    ),
    ...rows(
      'submit priority',
      'priority',
      [...NOT_INTEGERS.filter(([v]) => v !== -1), [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]],
      (priority) => queue.submit({ ...submit, priority } as never),
    ),
    ...rows('submit notBefore', 'notBefore', NOT_INTEGERS, (notBefore) => queue.submit({ ...submit, notBefore } as never)),
    ...rows('submit deadline', 'deadline', NOT_INTEGERS, (deadline) => queue.submit({ ...submit, deadline } as never)),
    ...rows('submit maxAttempts', 'maxAttempts', [...NOT_INTEGERS, [0, '0']], (maxAttempts) =>
      queue.submit({ ...submit, maxAttempts } as never),
    ),
    ...rows(
      'submit metadata',
      'metadata',
      notPlainObjects('a').filter(([value]) => value !== null),
      (metadata) => queue.submit({ ...submit, metadata } as never),
    ),
    ...rows(
      'submit metadata value',
      'metadata.a',
      [
        [1, '1'],
        [null, 'null'],
        [new Date(0), 'Date('],
        ['\ud800', '"\\ud800"'],
      ],
      (a) => queue.submit({ ...submit, metadata: { a } } as never),
    ),
    {
      label: 'submit metadata key with a lone surrogate',
      call: () => queue.submit({ ...submit, metadata: { 'k\ud800': 'v' } }),
      mentions: ['metadata', '"k\\ud800"'],
    },
    {
      label: 'submit metadata "__proto__" key',
      call: () => queue.submit({ ...submit, metadata: JSON.parse('{"__proto__":"x"}') as Record<string, string> }),
      mentions: ['metadata', '"__proto__"'],
    },
    {
      label: 'submit misspelt option',
      call: () => queue.submit({ ...submit, maxAttempt: 3 } as never),
      mentions: ['submit request', '"maxAttempt"'],
    },
    // submitBatch: each item as submit checks it, named by its index; the batch itself an array of 1 to 10,000
    ...rows('submitBatch requests', 'requests', [[[], '0'], ['x', '"x"'], [null, 'null'], [{}, '{}'], ...notArrays()], (requests) =>
      queue.submitBatch(requests as never),
    ),
    ...rows('submitBatch item', 'requests[1]', notPlainObjects('tenant'), (item) => queue.submitBatch([submit, item] as never)),
    ...rows('submitBatch item tenant', 'requests[1]: tenant', NOT_NAMES, (tenant) =>
      queue.submitBatch([submit, { ...submit, tenant }] as never),
    ),
    ...rows('submitBatch item maxAttempts', 'requests[0]: maxAttempts', [...NOT_INTEGERS, [0, '0']], (maxAttempts) =>
      queue.submitBatch([{ ...submit, maxAttempts }] as never),
    ),
    {
      label: 'submitBatch item misspelt option',
      call: () => queue.submitBatch([submit, { ...submit, maxAttempt: 3 }] as never),
      mentions: ['requests[1]', '"maxAttempt"'],
    },
    {
      label: 'submitBatch of more than 10,000',
      call: () => queue.submitBatch(Array.from({ length: 10_001 }, () => submit)),
      mentions: ['requests', '10001'],
    },
    // takeStarted: a take's fields, max and maxAttempts
    ...objectRows('takeStarted', 'takeStarted request', 'agents', (request) => queue.takeStarted(request as never)),
    ...rows('takeStarted agents', 'agents', [[[], '[]'], [[42], '42'], [null, 'null'], ...notArrays()], (agents) =>
      queue.takeStarted({ agents, holder: 'w', ttlMs: 1000 } as never),
    ),
    ...rows('takeStarted holder', 'holder', NOT_NAMES, (holder) => queue.takeStarted({ agents: ['build'], holder, ttlMs: 1000 } as never)),
    ...rows('takeStarted ttlMs', 'ttlMs', [...NOT_INTEGERS, [0, '0']], (ttlMs) =>
      queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs } as never),
    ),
    ...rows('takeStarted max', 'max', [...NOT_INTEGERS, [0, '0'], [10_001, '10001']], (max) =>
      queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: 1000, max } as never),
    ),
    ...rows('takeStarted maxAttempts', 'maxAttempts', [...NOT_INTEGERS, [0, '0']], (maxAttempts) =>
      queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: 1000, maxAttempts } as never),
    ),
    // closeBatch: each item a lease and a close request, named by its index
    ...rows('closeBatch closes', 'closes', [[[], '0'], [null, 'null'], ...notArrays()], (closes) => queue.closeBatch(closes as never)),
    ...rows('closeBatch item', 'closes[0]', notPlainObjects('lease'), (item) => queue.closeBatch([item] as never)),
    ...rows('closeBatch item lease.epoch', 'closes[0]: lease.epoch', [...NOT_INTEGERS, [0, '0']], (epoch) =>
      queue.closeBatch([{ lease: badLease('epoch', epoch), request: { status: 'succeeded' } }]),
    ),
    ...rows(
      'closeBatch item status',
      'closes[1]: status',
      [
        ['done', '"done"'],
        [undefined, 'undefined'],
      ],
      (status) =>
        queue.closeBatch([
          { lease, request: { status: 'succeeded' } },
          { lease, request: { status } as never },
        ]),
    ),
    {
      label: 'closeBatch item unknown key',
      call: () => queue.closeBatch([{ lease, request: { status: 'succeeded' }, colour: 1 } as never]),
      mentions: ['closes[0]', '"colour"'],
    },
    // take, takeEntry
    ...objectRows('take', 'take request', 'agents', (request) => queue.take(request as never)),
    ...rows(
      'take agents',
      'agents',
      [[[], '[]'], ['build', '"build"'], [[42], '42'], [[''], '""'], [null, 'null'], ...notArrays()],
      (agents) => queue.take({ agents, holder: 'w', ttlMs: 1000 } as never),
    ),
    ...rows(
      'take tenants',
      'tenants',
      [[[], '[]'], ['acme', '"acme"'], [[42], '42'], [[''], '""'], [['a\u0000b'], '"a\\u0000b"'], [null, 'null'], ...notArrays()],
      (tenants) => queue.take({ agents: ['build'], tenants, holder: 'w', ttlMs: 1000 } as never),
    ),
    ...rows('take holder', 'holder', NOT_NAMES, (holder) => queue.take({ agents: ['build'], holder, ttlMs: 1000 } as never)),
    ...rows('take ttlMs', 'ttlMs', [...NOT_INTEGERS, [0, '0']], (ttlMs) => queue.take({ agents: ['build'], holder: 'w', ttlMs } as never)),
    ...rows('takeEntry tenant', 'tenant', NOT_NAMES, (tenant) =>
      queue.takeEntry(tenant as never, open.entryId, { holder: 'w', ttlMs: 1000 }),
    ),
    ...rows(
      'takeEntry entryId',
      'entryId',
      [
        [42, '42'],
        [null, 'null'],
        [{}, '{}'],
        [Symbol('id'), 'Symbol(id)'],
      ],
      (entryId) => queue.takeEntry('acme', entryId as never, { holder: 'w', ttlMs: 1000 }),
    ),
    ...objectRows('takeEntry', 'take request', 'holder', (request) => queue.takeEntry('acme', open.entryId, request as never)),
    ...rows('takeEntry ttlMs', 'ttlMs', NOT_INTEGERS, (ttlMs) => queue.takeEntry('acme', open.entryId, { holder: 'w', ttlMs } as never)),
    // the lease commands
    ...rows('extend lease', 'lease', notPlainObjects('tenant'), (value) => queue.extend(value as never, 1000)),
    ...rows('extend lease.epoch', 'lease.epoch', [...NOT_INTEGERS, [0, '0']], (epoch) => queue.extend(badLease('epoch', epoch), 1000)),
    ...rows('extend lease.tenant', 'lease.tenant', NOT_NAMES, (tenant) => queue.extend(badLease('tenant', tenant), 1000)),
    ...rows('extend lease.entryId', 'lease.entryId', NOT_NAMES, (entryId) => queue.extend(badLease('entryId', entryId), 1000)),
    ...rows('extend ttlMs', 'ttlMs', [...NOT_INTEGERS, [0, '0']], (ttlMs) => queue.extend(lease, ttlMs as never)),
    ...rows('startAttempt runId', 'runId', NOT_NAMES, (runId) => queue.startAttempt(lease, runId as never)),
    ...objectRows('yield', 'yield request', 'kind', (request) => queue.yield(lease, request as never), 'delay'),
    ...rows(
      'yield kind',
      'yield kind',
      [
        ['later', '"later"'],
        [undefined, 'undefined'],
      ],
      (kind) => queue.yield(lease, { kind } as never),
    ),
    ...rows(
      'yield retry error',
      'error',
      [
        [42, '42'],
        ['\ud800', '"\\ud800"'],
      ],
      (error) => queue.yield(lease, { kind: 'retry', error } as never),
    ),
    { label: 'yield retry without error', call: () => queue.yield(lease, { kind: 'retry' } as never), mentions: ['error'] },
    ...rows('yield retry delayMs', 'delayMs', NOT_INTEGERS, (delayMs) =>
      queue.yield(lease, { kind: 'retry', error: 'e', delayMs } as never),
    ),
    {
      label: 'yield defer with a delay',
      call: () => queue.yield(lease, { kind: 'defer', delayMs: 5 } as never),
      mentions: ['defer', 'delayMs'],
    },
    ...objectRows('close', 'close request', 'status', (request) => queue.close(lease, request as never), 'outcome'),
    ...rows(
      'close status',
      'status',
      [
        ['done', '"done"'],
        [undefined, 'undefined'],
      ],
      (status) => queue.close(lease, { status } as never),
    ),
    ...rows(
      'close result',
      'result',
      [
        [42, '42'],
        [new Map(), 'Map(0)'],
        ['\ud800', '"\\ud800"'],
      ],
      (result) => queue.close(lease, { status: 'succeeded', result } as never),
    ),
    ...rows(
      'close error',
      'error',
      [
        [42, '42'],
        ['\ud800', '"\\ud800"'],
      ],
      (error) => queue.close(lease, { status: 'failed', error } as never),
    ),
    // entry reads and the thread/entry commands
    ...rows('cancel tenant', 'tenant', NOT_NAMES, (tenant) => queue.cancel(tenant as never, open.entryId)),
    ...rows(
      'cancel entryId',
      'entryId',
      [
        [42, '42'],
        [null, 'null'],
      ],
      (entryId) => queue.cancel('acme', entryId as never),
    ),
    ...rows(
      'cancel reason',
      'reason',
      [
        [42, '42'],
        ['\ud800', '"\\ud800"'],
      ],
      (reason) => queue.cancel('acme', open.entryId, reason as never),
    ),
    ...rows('entry tenant', 'tenant', NOT_NAMES, (tenant) => queue.entry(tenant as never, open.entryId)),
    ...rows(
      'entry entryId',
      'entryId',
      [
        [42, '42'],
        [null, 'null'],
        [undefined, 'undefined'],
        [Number.NaN, 'NaN'],
        [{}, '{}'],
      ],
      (entryId) => queue.entry('acme', entryId as never),
    ),
    ...['tenant', 'thread'].flatMap((field) =>
      rows(`openEntries ${field}`, field, NOT_NAMES, (value) =>
        field === 'tenant' ? queue.openEntries(value as never, 't1') : queue.openEntries('acme', value as never),
      ),
    ),
    ...['tenant', 'thread'].flatMap((field) =>
      rows(`deleteThread ${field}`, field, NOT_NAMES, (value) =>
        field === 'tenant' ? queue.deleteThread(value as never, 't1') : queue.deleteThread('acme', value as never),
      ),
    ),
    // retention and waiting
    ...rows('prune ticketLifetimeMs', 'ticketLifetimeMs', NOT_INTEGERS, (value) => queue.prune(value as never, 10)),
    ...rows('prune limit', 'limit', NOT_INTEGERS, (value) => queue.prune(0, value as never)),
    ...objectRows(
      'awaitClosed',
      'awaitClosed options',
      'timeoutMs',
      (options) => queue.awaitClosed('acme', open.entryId, options as never),
      'timeout',
    ),
    ...rows('awaitClosed signal', 'signal', [[{}, '{}'], ['abort', '"abort"'], [null, 'null'], ...notSignals()], (signal) =>
      queue.awaitClosed('acme', open.entryId, { signal, timeoutMs: 10 } as never),
    ),
    ...rows('awaitClosed timeoutMs', 'timeoutMs', [...NOT_INTEGERS, [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]], (timeoutMs) =>
      queue.awaitClosed('acme', open.entryId, { timeoutMs } as never),
    ),
    ...rows(
      'awaitClosed entryId',
      'entryId',
      [
        [42, '42'],
        [null, 'null'],
      ],
      (entryId) => queue.awaitClosed('acme', entryId as never),
    ),
    ...rows(
      'nextDueAt agents',
      'agents',
      [[[], '[]'], ['build', '"build"'], [[42], '42'], [null, 'null'], [undefined, 'undefined'], ...notArrays()],
      (agents) => queue.nextDueAt(agents as never),
    ),
    ...rows(
      'nextDueAt tenants',
      'tenants',
      [[[], '[]'], ['acme', '"acme"'], [[42], '42'], [[''], '""'], [null, 'null'], ...notArrays()],
      (tenants) => queue.nextDueAt(['build'], tenants as never),
    ),
    ...rows(
      'onWork listener',
      'listener',
      [
        [42, '42'],
        [null, 'null'],
        [{}, '{}'],
      ],
      (listener) => queue.onWork(listener as never),
    ),
  ];
}
