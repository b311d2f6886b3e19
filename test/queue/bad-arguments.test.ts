/**
 * Every public entry point against malformed arguments, as one table: each row is a call,
 * the code it must be refused with (InvalidArgument unless said) and what its message must
 * name (the argument and the bad value as described). After the table: nothing was
 * written (end offsets and files unchanged), no timer was left behind, and no exception
 * escaped (an uncaught one would kill a caller's process).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  decodeEvent,
  encodeEvent,
  isRunlogError,
  openLog,
  openRunQueue,
  openRunQueueOnLog,
  partitionOf,
  replayPartition,
  Worker,
  type Lease,
  type RunQueue,
} from '../../src/index.ts';
import { FakeClock } from '../contract/fixtures.ts';

import {
  endOffsets,
  escapes,
  eventLogRows,
  failedRows,
  Foo,
  hostileProxy,
  NOT_INTEGERS,
  NOT_NAMES,
  notBytes,
  notPlainObjects,
  notSignals,
  objectRows,
  rows,
  timersActive,
  TIMER_OVERFLOW,
  type Row,
} from './bad-argument-rows.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { runQueueApiRows } from './run-queue-api-rows.ts';

/**
 * Waits until the file log has recorded how far each partition reached: it does so in the
 * background a second after the last append (src/log/file/reached.ts), which would
 * otherwise read as a refused call changing files.
 */
async function reachedRecorded(dir: string, ends: readonly bigint[]): Promise<void> {
  const recorded = async (p: number) =>
    (await readFile(join(dir, `reached-${p}.json`), 'utf8').catch(() => '')).includes(`"end":"${ends[p]}"`);
  while (!(await Promise.all(ends.map((_, p) => recorded(p)))).every(Boolean)) await delay(50);
}

function fileSizes(dir: string): string {
  return (readdirSync(dir, { recursive: true }) as string[])
    .sort()
    .map((name) => `${name}:${statSync(join(dir, name)).size}`)
    .join(',');
}

describe('bad arguments', () => {
  it(
    'every public entry point refuses every malformed argument with InvalidArgument naming it, writes nothing and leaves nothing running',
    { timeout: 600_000 },
    async (t) => {
      const escaped = escapes(t);
      const tmp = await scratchDir(t, 'runlog-bad-arguments-');
      const neverDir = join(tmp, 'never');
      const clock = new FakeClock();
      const queue: RunQueue = await openRunQueue({ log: { kind: 'file', dir: join(tmp, 'queue') }, clock: clock.read });
      onCleanup(t, () => queue.stop());
      const memory = await openLog({ kind: 'memory' }, 2);
      onCleanup(t, () => memory.close());
      const submit = { tenant: 'acme', thread: 't1', agent: 'build', input: 'x' };
      const open = await queue.submit(submit);
      await queue.submit({ ...submit, thread: 't2' });
      const lease: Lease = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!.lease;
      const worker = new Worker(queue, { logger: () => {} });
      worker.handle('build', () => 'done');
      // For rows of other items of the issue (a file where a dir belongs, a garbage log.json).
      const aFile = join(tmp, 'a-file');
      writeFileSync(aFile, 'not a log');
      const garbage = join(tmp, 'garbage');
      mkdirSync(garbage);
      writeFileSync(join(garbage, 'log.json'), 'garbage');
      const withQueue = async (options: object, use: (queue: RunQueue) => Promise<unknown>): Promise<void> => {
        const opened = await openRunQueue({ log: { kind: 'memory' }, ...options } as never);
        try {
          await use(opened);
        } finally {
          await opened.stop();
        }
      };
      const queueOptions = (extra: object) => ({ log: { kind: 'memory' }, ...extra });
      const fileLog = (extra: object) => ({ kind: 'file', dir: neverDir, ...extra });
      const kafkaLog = (extra: object) => ({ kind: 'kafka', brokers: ['127.0.0.1:1'], topic: 'never', ...extra });
      const logConfigRows = (label: string, open: (config: unknown) => unknown): Row[] => [
        ...rows(`${label} log`, 'log', [...notPlainObjects('kind'), [{ colour: 1 }, '{ colour: 1 }']], open),
        ...rows(
          `${label} log kind`,
          'log',
          [
            ['__proto__', "kind: '__proto__'"],
            ['toString', "kind: 'toString'"],
            ['disk', "kind: 'disk'"],
            [undefined, 'kind: undefined'],
          ],
          (kind) => open({ kind }),
        ),
        ...rows(
          `${label} file dir`,
          'dir',
          [
            [42, '42'],
            ['', '""'],
            [`${neverDir}\u0000x`, '\\u0000x'],
            [undefined, 'undefined'],
          ],
          (dir) => open(fileLog({ dir })),
        ),
        ...rows(
          `${label} file fsync`,
          'fsync',
          [
            ['yes', '"yes"'],
            [1, '1'],
          ],
          (fsync) => open(fileLog({ fsync })),
        ),
        { label: `${label} file log with unknown key`, call: () => open(fileLog({ fsynk: false })), mentions: ['file log', '"fsynk"'] },
        {
          label: `${label} memory log with unknown key`,
          call: () => open({ kind: 'memory', dir: neverDir }),
          mentions: ['memory log', '"dir"'],
        },
        ...rows(
          `${label} kafka brokers`,
          'brokers',
          [
            [[], '[]'],
            ['127.0.0.1:1', '"127.0.0.1:1"'],
            [[42], '[ 42 ]'],
          ],
          (brokers) => open(kafkaLog({ brokers })),
        ),
        ...rows(
          `${label} kafka topic`,
          'topic',
          [
            ['bad topic!', '"bad topic!"'],
            [42, '42'],
          ],
          (topic) => open(kafkaLog({ topic })),
        ),
        ...rows(
          `${label} kafka clientId`,
          'clientId',
          [
            [42, '42'],
            ['', '""'],
          ],
          (clientId) => open(kafkaLog({ clientId })),
        ),
        ...rows(
          `${label} kafka replicationFactor`,
          'replicationFactor',
          [
            [0, '0'],
            [Number.NaN, 'NaN'],
            [1.5, '1.5'],
          ],
          (replicationFactor) => open(kafkaLog({ replicationFactor })),
        ),
        ...rows(
          `${label} kafka transactionTimeoutMs`,
          'transactionTimeoutMs',
          [
            [Number.POSITIVE_INFINITY, 'Infinity'],
            [1.5, '1.5'],
          ],
          (transactionTimeoutMs) => open(kafkaLog({ transactionTimeoutMs })),
        ),
        ...rows(
          `${label} kafka tailWaitMs`,
          'tailWaitMs',
          [
            [Number.NaN, 'NaN'],
            [0, '0'],
          ],
          (tailWaitMs) => open(kafkaLog({ tailWaitMs })),
        ),
        ...rows(
          `${label} kafka topicConfig`,
          'topicConfig',
          [
            [new Map(), 'Map(0)'],
            [{ 'retention.ms': 1 }, "'retention.ms': 1"],
            [[], '[]'],
          ],
          (topicConfig) => open(kafkaLog({ topicConfig })),
        ),
        { label: `${label} kafka log with unknown key`, call: () => open(kafkaLog({ broker: 'x' })), mentions: ['kafka log', '"broker"'] },
      ];
      const settingRows = (label: string, open: (options: unknown) => unknown): Row[] => [
        ...['clock', 'monotonicClock', 'onWarning'].flatMap((field) =>
          rows(
            `${label} ${field}`,
            field,
            [
              [5, '5'],
              ['now', '"now"'],
              [null, 'null'],
            ],
            (value) => open({ [field]: value }),
          ),
        ),
        ...rows(`${label} clockStepToleranceMs`, 'clockStepToleranceMs', [...NOT_INTEGERS, [null, 'null']], (clockStepToleranceMs) =>
          open({ clockStepToleranceMs }),
        ),
        ...objectRows(`${label} capacity`, 'capacity', 'perTenant', (capacity) => open({ capacity })),
        ...rows(`${label} capacity.perTenant`, 'capacity.perTenant', [...NOT_INTEGERS, [0, '0']], (perTenant) =>
          open({ capacity: { perTenant } }),
        ),
        ...rows(`${label} capacity.total`, 'capacity.total', [...NOT_INTEGERS, [0, '0']], (total) => open({ capacity: { total } })),
        ...rows(`${label} maxInputBytes`, 'maxInputBytes', [...NOT_INTEGERS, [0, '0']], (maxInputBytes) => open({ maxInputBytes })),
        ...rows(`${label} closedCacheBytes`, 'closedCacheBytes', [...NOT_INTEGERS, [null, 'null']], (closedCacheBytes) =>
          open({ closedCacheBytes }),
        ),
        ...objectRows(`${label} retention`, 'retention', 'ticketLifetimeMs', (retention) => open({ retention }), 'every'),
        ...rows(
          `${label} retention.ticketLifetimeMs`,
          'retention.ticketLifetimeMs',
          [...NOT_INTEGERS, [undefined, 'undefined']],
          (ticketLifetimeMs) => open({ retention: { ticketLifetimeMs } }),
        ),
        ...rows(
          `${label} retention.everyMs`,
          'retention.everyMs',
          [...NOT_INTEGERS, [0, '0'], [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]],
          (everyMs) => open({ retention: { ticketLifetimeMs: 0, everyMs } }),
        ),
        ...rows(`${label} retention.limit`, 'retention.limit', [...NOT_INTEGERS, [0, '0']], (limit) =>
          open({ retention: { ticketLifetimeMs: 0, limit } }),
        ),
        ...rows(
          `${label} snapshots`,
          'snapshots',
          [
            [true, 'true'],
            [null, 'null'],
            ['often', '"often"'],
            [[], '[]'],
          ],
          (snapshots) => open({ snapshots }),
        ),
        {
          label: `${label} snapshots with unknown key`,
          call: () => open({ snapshots: { everyBytes: 1 } }),
          mentions: ['snapshots', '"everyBytes"'],
        },
        ...rows(`${label} snapshots.everyRecords`, 'snapshots.everyRecords', [...NOT_INTEGERS, [0, '0']], (everyRecords) =>
          open({ snapshots: { everyRecords } }),
        ),
        ...rows(
          `${label} snapshots.everyMs`,
          'snapshots.everyMs',
          [...NOT_INTEGERS, [0, '0'], [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]],
          (everyMs) => open({ snapshots: { everyMs } }),
        ),
      ];
      const table: Row[] = [
        // openRunQueue and its options, nested ones included
        ...objectRows('openRunQueue options', 'options', 'log', (options) => openRunQueue(options as never), 'partition'),
        ...logConfigRows('openRunQueue', (log) => openRunQueue({ log } as never)),
        ...rows('openRunQueue partitions', 'partitions', [...NOT_INTEGERS, [0, '0']], (partitions) =>
          openRunQueue(queueOptions({ partitions }) as never),
        ),
        ...settingRows('openRunQueue', (options) => openRunQueue(queueOptions(options as object) as never)),
        // openRunQueueOnLog
        ...rows(
          'openRunQueueOnLog log',
          'log',
          [
            [null, 'null'],
            [{}, '{}'],
          ],
          (log) => openRunQueueOnLog(log as never),
        ),
        ...objectRows('openRunQueueOnLog options', 'options', 'clock', (options) => openRunQueueOnLog(memory, options as never)),
        {
          label: 'openRunQueueOnLog options naming a log',
          call: () => openRunQueueOnLog(memory, { log: { kind: 'memory' } } as never),
          mentions: ['options', '"log"'],
        },
        ...settingRows('openRunQueueOnLog', (options) => openRunQueueOnLog(memory, options as never)),
        // openLog
        ...logConfigRows('openLog', (config) => openLog(config as never)),
        ...rows('openLog partitions', 'partitions', [...NOT_INTEGERS, [0, '0']], (partitions) =>
          openLog({ kind: 'memory' }, partitions as never),
        ),
        ...runQueueApiRows(queue, { submit, open, lease }),
        // what only the RunQueue has
        ...rows('answerCommand partition', 'partition', [...NOT_INTEGERS, [99, '99']], (partition) =>
          queue.answerCommand(partition as never, null),
        ),
        ...rows(
          'answerCommand command',
          'command',
          [
            ['x', '"x"'],
            [42, '42'],
            [{ type: 'Submitted' }, "{ type: 'Submitted' }"],
          ],
          (command) => queue.answerCommand(0, command as never),
        ),
        ...objectRows('answerCommand options', 'answerCommand options', 'consumed', (options) =>
          queue.answerCommand(0, null, options as never),
        ),
        ...rows('answerCommand generation', 'generation', NOT_INTEGERS, (generation) =>
          queue.answerCommand(0, null, { generation } as never),
        ),
        ...rows(
          'answerCommand consumed',
          'consumed',
          [
            [{ group: 'g', topic: 't', partition: 0, offset: 5 }, 'offset'],
            [{ group: '', topic: 't', partition: 0, offset: 5n }, 'group'],
            [{ group: 'g', topic: 't', partition: -1, offset: 5n }, 'partition'],
            [{ group: 'g', topic: 't', offset: 5n, colour: 1 }, '"colour"'],
          ],
          (consumed) => queue.answerCommand(0, null, { consumed } as never),
        ),
        ...rows('awaitServing partition', 'partition', [...NOT_INTEGERS, [99, '99']], (partition) =>
          queue.awaitServing(partition as never),
        ),
        ...objectRows('sweep', 'sweep options', 'ticketLifetimeMs', (options) => queue.sweep(options as never), 'everyMs'),
        ...rows('sweep ticketLifetimeMs', 'ticketLifetimeMs', [...NOT_INTEGERS, [undefined, 'undefined']], (ticketLifetimeMs) =>
          queue.sweep({ ticketLifetimeMs } as never),
        ),
        ...rows('sweep limit', 'limit', NOT_INTEGERS, (limit) => queue.sweep({ ticketLifetimeMs: 0, limit } as never)),
        ...objectRows('startSweeping', 'retention', 'ticketLifetimeMs', (retention) => queue.startSweeping(retention as never), 'every'),
        ...rows(
          'startSweeping everyMs',
          'retention.everyMs',
          [
            [TIMER_OVERFLOW, String(TIMER_OVERFLOW)],
            [0, '0'],
            [Number.NaN, 'NaN'],
          ],
          (everyMs) => queue.startSweeping({ ticketLifetimeMs: 0, everyMs } as never),
        ),
        // the Worker
        ...rows(
          'Worker queue',
          'queue',
          [
            [null, 'null'],
            [{}, '{}'],
            [hostileProxy(), 'Proxy'],
          ],
          (value) => new Worker(value as never),
        ),
        ...objectRows('Worker options', 'worker options', 'concurrency', (options) => new Worker(queue, options as never), 'logLevel'),
        ...rows(
          'Worker concurrency',
          'concurrency',
          [...NOT_INTEGERS, [0, '0']],
          (concurrency) => new Worker(queue, { concurrency } as never),
        ),
        ...rows(
          'Worker leaseMs',
          'leaseMs',
          [...NOT_INTEGERS, [1, '1'], [TIMER_OVERFLOW * 2, String(TIMER_OVERFLOW * 2)]],
          (leaseMs) => new Worker(queue, { leaseMs } as never),
        ),
        ...rows('Worker pollMs', 'pollMs', [...NOT_INTEGERS, [0, '0']], (pollMs) => new Worker(queue, { pollMs } as never)),
        ...rows(
          'Worker maxAttempts',
          'maxAttempts',
          [...NOT_INTEGERS, [0, '0']],
          (maxAttempts) => new Worker(queue, { maxAttempts } as never),
        ),
        ...rows(
          'Worker graceMs',
          'graceMs',
          [...NOT_INTEGERS, [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]],
          (graceMs) => new Worker(queue, { graceMs } as never),
        ),
        ...rows('Worker holder', 'holder', NOT_NAMES, (holder) => new Worker(queue, { holder } as never)),
        ...rows('Worker periodicTenant', 'periodicTenant', NOT_NAMES, (periodicTenant) => new Worker(queue, { periodicTenant } as never)),
        ...['backoff', 'onEvent', 'logger'].flatMap((field) =>
          rows(
            `Worker ${field}`,
            field,
            [
              [5, '5'],
              ['log', '"log"'],
              [null, 'null'],
            ],
            (value) => new Worker(queue, { [field]: value } as never),
          ),
        ),
        ...rows(
          'Worker timers',
          'timers',
          [
            [{}, '{}'],
            [null, 'null'],
            [{ setTimeout: 1, clearTimeout: 2 }, 'setTimeout: 1'],
            [hostileProxy(), 'Proxy'],
          ],
          (timers) => new Worker(queue, { timers } as never),
        ),
        ...rows('handle agent', 'agent', NOT_NAMES, (agent) =>
          new Worker(queue, { logger: () => {} }).handle(agent as never, () => undefined),
        ),
        ...rows(
          'handle handler',
          'handler',
          [
            ['run', '"run"'],
            [null, 'null'],
          ],
          (handler) => new Worker(queue, { logger: () => {} }).handle('build', handler as never),
        ),
        { label: 'handle twice', call: () => worker.handle('build', () => undefined), mentions: ['"build"', 'already has a handler'] },
        ...rows('handleEvery everyMs', 'everyMs', [...NOT_INTEGERS, [0, '0'], [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]], (everyMs) =>
          new Worker(queue, { logger: () => {} }).handleEvery('tick', everyMs as never, () => undefined),
        ),
        ...rows('handleEvery agent', 'agent', NOT_NAMES, (agent) =>
          new Worker(queue, { logger: () => {} }).handleEvery(agent as never, 1000, () => undefined),
        ),
        ...rows('ensureFresh tenant', 'tenant', NOT_NAMES, (tenant) => worker.ensureFresh(tenant as never, 't1', 'build')),
        ...rows('ensureFresh thread', 'thread', NOT_NAMES, (thread) => worker.ensureFresh('acme', thread as never, 'build')),
        ...rows('ensureFresh agent', 'agent', [...NOT_NAMES, ['deploy', '"deploy"']], (agent) =>
          worker.ensureFresh('acme', 't1', agent as never),
        ),
        ...objectRows('ensureFresh options', 'ensureFresh options', 'signal', (options) =>
          worker.ensureFresh('acme', 't1', 'build', options as never),
        ),
        ...rows('ensureFresh signal', 'signal', [[{}, '{}'], ['stop', '"stop"'], ...notSignals()], (signal) =>
          worker.ensureFresh('acme', 't1', 'build', { signal } as never),
        ),
        ...rows('run signal', 'AbortSignal', [[undefined, 'undefined'], [{}, '{}'], [null, 'null'], ...notSignals()], (signal) =>
          worker.run(signal as never),
        ),
        ...rows('runDue agent', 'agent', [...NOT_NAMES, ['deploy', '"deploy"']], (agent) => worker.runDue(agent as never)),
        ...rows('waitIdle signal', 'signal', [[{}, '{}'], ['x', '"x"'], [null, 'null'], ...notSignals()], (signal) =>
          worker.waitIdle(signal as never),
        ),
        // an EventLog: the memory log and the queue's own file log
        ...[memory, queue.log].flatMap(eventLogRows),
        // the codec, the partitioner and replay
        ...rows(
          'encodeEvent',
          'event',
          [
            [null, 'null'],
            [new Map(), 'Map(0)'],
            [new Foo(), 'Foo'],
            [hostileProxy(), 'Proxy'],
          ],
          (event) => encodeEvent(event as never),
        ),
        ...rows(
          'encodeEvent type',
          'type',
          [
            ['__proto__', '"__proto__"'],
            ['toString', '"toString"'],
            [42, '42'],
          ],
          (type) => encodeEvent({ type } as never),
        ),
        {
          label: 'encodeEvent with a throwing getter',
          call: () =>
            encodeEvent(
              Object.defineProperty({ type: 'CancelRequested' }, 'tenant', {
                enumerable: true,
                get: () => {
                  throw new Error('getter boom');
                },
              }) as never,
            ),
          mentions: ['getter boom'],
        },
        {
          label: 'encodeEvent missing fields',
          call: () => encodeEvent({ type: 'CancelRequested', tenant: 'acme' } as never),
          mentions: ['CancelRequested', 'thread'],
        },
        ...rows('decodeEvent', 'Uint8Array', [[null, 'null'], ['abc', '"abc"'], [[0xc3, 1], '[ 195, 1 ]'], ...notBytes()], (bytes) =>
          decodeEvent(bytes as never),
        ),
        // partitionOf hashes any string (the queue checks names) but one UTF-8 encoders disagree on
        ...rows(
          'partitionOf tenant',
          'tenant',
          NOT_NAMES.filter(([value]) => typeof value !== 'string' || value.includes('\ud800')),
          (tenant) => partitionOf(tenant as never, 't', 8),
        ),
        ...rows(
          'partitionOf thread',
          'thread',
          NOT_NAMES.filter(([value]) => typeof value !== 'string' || value.includes('\ud800')),
          (thread) => partitionOf('acme', thread as never, 8),
        ),
        ...rows('partitionOf partitions', 'partitions', [...NOT_INTEGERS, [0, '0']], (partitions) =>
          partitionOf('acme', 't', partitions as never),
        ),
        ...rows(
          'replayPartition log',
          'log',
          [
            [null, 'null'],
            [{}, '{}'],
          ],
          (log) => replayPartition(log as never, 0),
        ),
        ...rows(
          'replayPartition partition',
          'partition',
          [
            [2, '2'],
            [Number.NaN, 'NaN'],
          ],
          (partition) => replayPartition(memory, partition as never),
        ),
        ...rows(
          'isRunlogError code',
          'code',
          [
            ['QueueFul', '"QueueFul"'],
            [42, '42'],
            [null, 'null'],
          ],
          (code) => isRunlogError(new Error('x'), code as never),
        ),
        // rows for what other items of the issue fixed: bounds, the file log's own files, the clock
        {
          label: 'submit metadata of too many keys',
          call: () => queue.submit({ ...submit, metadata: Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, 'v'])) }),
          mentions: ['metadata', '129 keys'],
        },
        {
          label: 'openRunQueue memory partitions over the maximum',
          call: () => openRunQueue({ log: { kind: 'memory' }, partitions: 1025 }),
          mentions: ['partitions', '1025'],
        },
        {
          label: 'openRunQueue file partitions over the maximum',
          call: () => openRunQueue({ log: { kind: 'file', dir: neverDir }, partitions: 2000 }),
          mentions: ['partitions', '2000'],
        },
        {
          label: 'openLog memory partitions over the maximum',
          call: () => openLog({ kind: 'memory' }, 1025),
          mentions: ['partitions', '1025'],
        },
        {
          label: 'openRunQueue file dir naming a file',
          call: () => openRunQueue({ log: { kind: 'file', dir: aFile } }),
          mentions: [aFile],
        },
        {
          label: 'openRunQueue file dir holding a garbage log.json',
          call: () => openRunQueue({ log: { kind: 'file', dir: garbage } }),
          mentions: [join(garbage, 'log.json')],
          code: 'Corrupt',
        },
        ...rows(
          'a clock returning',
          'clock',
          [
            [Number.NaN, 'NaN'],
            [Number.POSITIVE_INFINITY, 'Infinity'],
            ['now', '"now"'],
          ],
          (value) => withQueue({ clock: () => value }, (opened) => opened.submit(submit)),
        ),
      ];

      const memoryBefore = await endOffsets(memory);
      const queueBefore = await endOffsets(queue.log);
      await reachedRecorded(join(tmp, 'queue'), queueBefore);
      const filesBefore = fileSizes(tmp);
      const timersBefore = timersActive();
      const failures = await failedRows(table);
      // Let anything a bad call scheduled run: an escaped error shows up in `escaped`.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(failures, [], `${failures.length} of ${table.length} rows failed:\n${failures.join('\n')}`);
      assert.deepEqual(await endOffsets(memory), memoryBefore, 'a refused call wrote to the memory log');
      assert.deepEqual(await endOffsets(queue.log), queueBefore, "a refused call wrote to the queue's log");
      assert.equal(fileSizes(tmp), filesBefore, 'a refused call created or changed files');
      assert.equal(existsSync(neverDir), false, 'a refused open created its directory');
      assert.equal(timersActive(), timersBefore, 'a refused call left a timer behind');
      assert.deepEqual(escaped, [], 'an error escaped as an uncaught exception or unhandled rejection');
      // The queue still serves, and what was there is intact.
      assert.equal((await queue.entry('acme', open.entryId)).status, 'open');
      assert.ok(table.length > 400, `the table has ${table.length} rows`);
    },
  );

  it('an onWork listener that throws is a warning, not the answer of the command that woke it', async (t) => {
    const warnings: { code: string; message: string }[] = [];
    const queue = await openRunQueue({ log: { kind: 'memory' }, onWarning: (warning) => warnings.push(warning) });
    onCleanup(t, () => queue.stop());
    queue.onWork(() => {
      throw new Error('listener boom');
    });
    const ticket = await queue.submit({ tenant: 'acme', thread: 't', agent: 'build', input: 'x' });
    assert.equal((await queue.entry('acme', ticket.entryId)).status, 'open');
    assert.deepEqual(warnings, [{ code: 'RUNLOG_LISTENER', message: 'an onWork listener threw: Error: listener boom' }]);
  });

  it('the retention sweep runs on its timer with the retention it was given', async (t) => {
    const warnings: { code: string; message: string }[] = [];
    const clock = new FakeClock();
    const queue = await openRunQueue({
      log: { kind: 'memory' },
      clock: clock.read,
      retention: { ticketLifetimeMs: 1000, everyMs: 1 },
      onWarning: (warning) => warnings.push(warning),
    });
    onCleanup(t, () => queue.stop());
    await queue.submit({ tenant: 'acme', thread: 't', agent: 'build', input: 'x' });
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!;
    await queue.close(taken.lease, { status: 'succeeded' });
    clock.advance(1000);
    // Waits for the sweep's timer (1 ms) to fire and prune, or to fail: no timing is asserted.
    while ((await queue.metrics()).dropped === 0 && warnings.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.deepEqual(warnings, []);
    assert.equal((await queue.metrics()).dropped, 1);
  });
});
