/**
 * The client against malformed arguments. Every RunQueueApi call (the same table as the
 * queue's, test/queue/run-queue-api-rows.ts) is refused exactly as the RunQueue refuses it:
 * the same code and message, before any request reaches the server, and nothing written.
 * Then connect's options and take's wait, the client's own arguments.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/client/index.ts';
import { isRunlogError } from '../../src/errors.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import type { LogLevel, Logger } from '../../src/server/types.ts';
import { queueOn, submitOf } from '../contract/fixtures.ts';
import {
  endOffsets,
  failedRows,
  NOT_INTEGERS,
  notPlainObjects,
  notSignals,
  objectRows,
  outcome,
  rows,
  TIMER_OVERFLOW,
} from '../queue/bad-argument-rows.ts';
import { runQueueApiRows } from '../queue/run-queue-api-rows.ts';
import { onCleanup } from '../support/cleanup.ts';
import { partitionOfEntryId } from '../../src/queue/entry-id.ts';
import { TestCluster, threadOn, type TestNode } from './cluster-fixtures.ts';
import { serve } from './fixtures.ts';

/** Counts the requests the server served (one `http.request` line each). */
class RequestCounter implements Logger {
  requests = 0;
  log(_level: LogLevel, event: string): void {
    if (event === 'http.request') this.requests++;
  }
}

const memory = { openLog: (partitions: number) => openMemoryLog({ partitions }) };

describe('the client refuses malformed arguments', () => {
  it('every RunQueueApi call: the code and message of the queue in process, no request sent, nothing written', async (t) => {
    const { local, log } = await queueOn(memory, t);
    const counter = new RequestCounter();
    const server = await serve(local, { logger: counter });
    onCleanup(t, () => server.close());
    const client = await connect({ url: server.url });
    onCleanup(t, () => client.stop());
    const submit = submitOf('acme', 't1');
    const open = await client.submit(submit);
    await client.submit({ ...submit, thread: 't2' });
    const lease = (await client.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!.lease;
    const given = { submit, open, lease };
    const inProcess = runQueueApiRows(local, given);
    const remote = runQueueApiRows(client, given);
    const before = await endOffsets(log);
    const requests = counter.requests;
    assert.ok(requests >= 4, 'the counter counts the requests served');
    const differ: string[] = [];
    for (const [i, row] of remote.entries()) {
      const [expected, got] = [await outcome(inProcess[i]!.call), await outcome(row.call)];
      if (!isRunlogError(expected) || !isRunlogError(got) || expected.code !== got.code || expected.message !== got.message) {
        differ.push(`${row.label}: in process ${String(expected)}, through the client ${String(got)}`);
      }
    }
    assert.deepEqual(differ, [], `${differ.length} of ${remote.length} rows differ:\n${differ.join('\n')}`);
    assert.deepEqual(await failedRows(runQueueApiRows(client, given)), []);
    assert.equal(counter.requests, requests, 'a malformed call sent a request');
    assert.deepEqual(await endOffsets(log), before, 'a malformed call wrote to the log');
    assert.equal((await client.entry('acme', open.entryId)).status, 'open', 'the client still serves');
  });

  it('every RunQueueApi call through the client of a cluster (2 nodes): refused as in process, no request sent', async (t) => {
    const cluster = await TestCluster.start(t, { nodes: 2, partitions: 4, log: 'memory' });
    const [a] = cluster.nodes as [TestNode, TestNode];
    const client = await connect({ url: cluster.nodes.map((n) => n.url), mapRefreshMs: 60_000 });
    onCleanup(t, () => client.stop());
    // The given entries live on partition 0, a's: the rows compare the client with a's queue.
    const submit = submitOf('acme', threadOn(0, 4));
    const open = await client.submit(submit);
    await client.submit({ ...submit, thread: threadOn(0, 4, 'u') });
    const lease = (await client.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!.lease;
    assert.equal(partitionOfEntryId(lease.entryId, 4), 0);
    const given = { submit, open, lease };
    const inProcess = runQueueApiRows(a.queue, given);
    const remote = runQueueApiRows(client, given);
    const requests = cluster.nodes.map((n) => n.statuses.length);
    const differ: string[] = [];
    for (const [i, row] of remote.entries()) {
      const [expected, got] = [await outcome(inProcess[i]!.call), await outcome(row.call)];
      if (!isRunlogError(expected) || !isRunlogError(got) || expected.code !== got.code || expected.message !== got.message) {
        differ.push(`${row.label}: in process ${String(expected)}, through the client ${String(got)}`);
      }
    }
    assert.deepEqual(differ, [], `${differ.length} of ${remote.length} rows differ:\n${differ.join('\n')}`);
    assert.deepEqual(
      cluster.nodes.map((n) => n.statuses.length),
      requests,
      'a malformed call sent a request',
    );
  });

  it("connect's options and take's wait: InvalidArgument naming the value, nothing sent", async (t) => {
    const { local } = await queueOn(memory, t);
    const counter = new RequestCounter();
    const server = await serve(local, { logger: counter });
    onCleanup(t, () => server.close());
    const client = await connect({ url: server.url });
    onCleanup(t, () => client.stop());
    const url = server.url;
    const take = { agents: ['build'], holder: 'w', ttlMs: 1000 };
    const requests = counter.requests;
    const table = [
      ...objectRows('connect', 'connect options', 'url', (options) => connect(options as never)),
      ...rows(
        'connect url',
        'url',
        [
          [42, '42'],
          ['', '""'],
          ['not a url', '"not a url"'],
          ['ftp://127.0.0.1/', '"ftp://127.0.0.1/"'],
          [`${url}/?x=1`, '?x=1'],
          [undefined, 'undefined'],
        ],
        (value) => connect({ url: value } as never),
      ),
      {
        label: 'connect url with credentials',
        call: () => connect({ url: url.replace('//', '//me:secret@') }),
        mentions: ['url', 'token'],
      },
      ...rows(
        'connect token',
        'token',
        [
          [42, 'number'],
          ['', 'string'],
          ['two words', 'string'],
          ['line\nbreak', 'string'],
        ],
        (token) => connect({ url, token } as never),
      ),
      ...rows(
        'connect monotonicClock',
        'monotonicClock',
        [
          [42, '42'],
          [null, 'null'],
        ],
        (clock) => connect({ url, monotonicClock: clock } as never),
      ),
      ...rows(
        'connect url list',
        'url',
        [
          [[], 'a list of 0'],
          [Array.from({ length: 65 }, (_, i) => `http://127.0.0.1:${1000 + i}`), 'a list of 65'],
        ],
        (urls) => connect({ url: urls } as never),
      ),
      ...rows(
        'connect url list item',
        'url[1]',
        [
          [42, '42'],
          [null, 'null'],
          ['ftp://127.0.0.1/', '"ftp://127.0.0.1/"'],
          [`${url}/#here`, '#here'],
        ],
        (bad) => connect({ url: [url, bad] } as never),
      ),
      { label: 'connect url list naming one url twice', call: () => connect({ url: [url, `${url}/`] }), mentions: ['url', 'twice'] },
      ...rows(
        'connect mapRefreshMs',
        'mapRefreshMs',
        [...NOT_INTEGERS, [0, '0'], [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]],
        (mapRefreshMs) => connect({ url, mapRefreshMs } as never),
      ),
      ...rows('connect onWarning', 'onWarning', [['warn', '"warn"']], (onWarning) => connect({ url, onWarning } as never)),
      ...rows(
        'connect ca',
        'ca',
        [
          [42, '42'],
          ['', '""'],
        ],
        (ca) => connect({ url, ca } as never),
      ),
      ...rows(
        'connect requestTimeoutMs',
        'requestTimeoutMs',
        [...NOT_INTEGERS, [0, '0'], [TIMER_OVERFLOW, String(TIMER_OVERFLOW)]],
        (requestTimeoutMs) => connect({ url, requestTimeoutMs } as never),
      ),
      ...objectRows('connect retry', 'retry', 'forMs', (retry) => connect({ url, retry } as never), 'tries'),
      ...rows('connect retry.forMs', 'retry.forMs', NOT_INTEGERS, (forMs) => connect({ url, retry: { forMs } } as never)),
      ...rows('connect retry.firstMs', 'retry.firstMs', [...NOT_INTEGERS, [0, '0']], (firstMs) =>
        connect({ url, retry: { firstMs } } as never),
      ),
      {
        label: 'connect retry.maxMs below firstMs',
        call: () => connect({ url, retry: { firstMs: 100, maxMs: 10 } }),
        mentions: ['retry.maxMs', '10'],
      },
      ...rows('take wait', 'take wait', notPlainObjects('waitMs'), (wait) => client.take(take, wait as never)),
      {
        label: 'take wait with unknown key',
        call: () => client.take(take, { timeoutMs: 5 } as never),
        mentions: ['take wait', '"timeoutMs"'],
      },
      ...rows('take waitMs', 'waitMs', [...NOT_INTEGERS, [60_001, '60001']], (waitMs) => client.take(take, { waitMs } as never)),
      ...rows('take signal', 'signal', [[{}, '{}'], [null, 'null'], ...notSignals()], (signal) => client.take(take, { signal } as never)),
    ];
    const failures = await failedRows(table);
    assert.deepEqual(failures, [], `${failures.length} of ${table.length} rows failed:\n${failures.join('\n')}`);
    assert.equal(counter.requests, requests, 'a malformed call sent a request');
  });
});
