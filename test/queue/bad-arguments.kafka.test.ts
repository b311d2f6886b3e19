/**
 * The bad-argument table's EventLog rows against a Kafka log on the real broker, with a
 * RunQueue over it: every method refuses with InvalidArgument naming the value, nothing is
 * written to the topic, and nothing escapes as an uncaught error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openRunQueueOnLog } from '../../src/index.ts';
import { kafkaBrokers, openTestKafkaLog } from '../log/kafka-test-support.ts';
import { openKafkaCommandSource } from '../../src/log/kafka/command-source.ts';
import {
  endOffsets,
  escapes,
  eventLogRows,
  failedRows,
  NOT_NAMES,
  objectRows,
  rows,
  TIMER_OVERFLOW,
  type Row,
} from './bad-argument-rows.ts';

describe('bad arguments on the Kafka log', () => {
  it('the Kafka log and a RunQueue over it refuse every malformed argument, naming it, and write nothing', async (t) => {
    const escaped = escapes(t);
    const log = await openTestKafkaLog(t, 2);
    const queue = await openRunQueueOnLog(log);
    t.after(() => queue.stop());
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 't', agent: 'build', input: 'x' });
    const table: Row[] = [
      ...eventLogRows(log),
      ...rows(
        'kafka claim partition',
        'partition',
        [
          [99, '99'],
          ['0', '"0"'],
          [Number.NaN, 'NaN'],
        ],
        (partition) => log.claim(partition as never),
      ),
      ...objectRows('openKafkaCommandSource', 'command source options', 'group', (options) => openKafkaCommandSource(options as never)),
      ...rows('openKafkaCommandSource group', 'group', NOT_NAMES, (group) =>
        openKafkaCommandSource({ brokers: kafkaBrokers(), topic: 'runlog-x', group, partitions: 2 } as never),
      ),
      ...rows(
        'openKafkaCommandSource topic',
        'topic',
        [
          ['a b', '"a b"'],
          [7, '7'],
        ],
        (topic) => openKafkaCommandSource({ brokers: kafkaBrokers(), topic, group: 'g', partitions: 2 } as never),
      ),
      ...rows(
        'openKafkaCommandSource partitions',
        'partitions',
        [
          [0, '0'],
          ['2', '"2"'],
        ],
        (partitions) => openKafkaCommandSource({ brokers: kafkaBrokers(), topic: 'runlog-x', group: 'g', partitions } as never),
      ),
      ...rows('submit tenant', 'tenant', NOT_NAMES, (tenant) => queue.submit({ tenant, thread: 't', agent: 'build', input: 'x' } as never)),
      ...objectRows(
        'awaitClosed',
        'awaitClosed options',
        'timeoutMs',
        (options) => queue.awaitClosed('acme', entryId, options as never),
        'timeout',
      ),
      ...rows('awaitClosed timeoutMs', 'timeoutMs', [[TIMER_OVERFLOW, String(TIMER_OVERFLOW)]], (timeoutMs) =>
        queue.awaitClosed('acme', entryId, { timeoutMs } as never),
      ),
    ];
    const before = await endOffsets(log);
    const failures = await failedRows(table);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(failures, [], `${failures.length} of ${table.length} rows failed:\n${failures.join('\n')}`);
    assert.deepEqual(await endOffsets(log), before, 'a refused call wrote to the topic');
    assert.deepEqual(escaped, [], 'an error escaped as an uncaught exception or unhandled rejection');
    assert.equal((await queue.entry('acme', entryId)).status, 'open');
  });
});
