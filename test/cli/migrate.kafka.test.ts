/**
 * `runlog migrate` on the real broker: a file log's entries (open, leased and closed,
 * cancelled, keyed) copied into a new topic read back the same through a queue on the topic,
 * ids and states kept, and a keyed submit still finds its ticket. Refused: a file log a
 * running queue holds (Locked, exit 1), a topic that holds records, a topic of another
 * partition count (exit 2), each writing nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { Entry } from '../../src/queue/types.ts';
import { submitOf } from '../contract/fixtures.ts';
import { deleteTopic, kafkaBrokers, openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { runCli } from './run-cli.ts';

const PARTITIONS = 3;

describe('runlog migrate', () => {
  it('copies a file log into a new topic: every entry, its id and state kept', async (t) => {
    const dir = await scratchDir(t, 'runlog-migrate-');
    const topic = uniqueTopic('runlog-migrate');
    onCleanup(t, () => deleteTopic(topic));
    const migrate = (to = topic) => runCli(['migrate', '--dir', dir, '--brokers', kafkaBrokers().join(','), '--topic', to, '--json']);

    const file = await openRunQueue({ log: { kind: 'file', dir }, partitions: PARTITIONS });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await file.submit(submitOf('acme', `order-${i}`))).entryId);
    const keyed = await file.submit(submitOf('acme', 'order-keyed', { key: 'receipt-1' }));
    ids.push(keyed.entryId);
    const taken = (await file.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!;
    await file.close(taken.lease, { status: 'succeeded', result: 'done' });
    await file.cancel('acme', ids[5]!, 'no longer needed');

    const locked = await migrate();
    assert.equal(locked.code, 1, locked.stderr);
    assert.match(locked.stderr, /Locked/, 'a running queue holds the file log');
    const before = new Map<string, Entry>();
    for (const id of ids) before.set(id, await file.entry('acme', id));
    await file.stop();

    const run = await migrate();
    assert.equal(run.code, 0, run.stderr);
    const copied = JSON.parse(run.stdout) as { partitions: { partition: number; records: number }[]; records: number };
    assert.deepEqual(
      copied.partitions.map((p) => p.partition),
      [0, 1, 2],
    );
    assert.ok(copied.records >= ids.length, `${copied.records} records`);

    const kafka = await openRunQueue({ log: { kind: 'kafka', brokers: kafkaBrokers(), topic } });
    onCleanup(t, () => kafka.stop());
    for (const id of ids) assert.deepEqual(await kafka.entry('acme', id), before.get(id), id);
    const again = await kafka.submit(submitOf('acme', 'order-keyed', { key: 'receipt-1' }));
    assert.deepEqual([again.entryId, again.created], [keyed.entryId, false], 'the ticket key carried over');
    assert.equal((await kafka.submit(submitOf('acme', 'order-new'))).created, true);
    await kafka.stop();

    const twice = await migrate();
    assert.equal(twice.code, 2, twice.stderr);
    assert.match(twice.stderr, /already holds records \(partition 0 ends at offset \d+\): migrate copies into a new or empty topic only/);

    const other = uniqueTopic('runlog-migrate-2');
    await openTestKafkaLog(t, 2, { topic: other });
    const mismatch = await migrate(other);
    assert.equal(mismatch.code, 2, mismatch.stderr);
    assert.match(mismatch.stderr, /topic .* has 2 partitions, expected 3; runlog never repartitions a topic/);
  });
});
