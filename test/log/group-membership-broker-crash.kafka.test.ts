/**
 * The group membership through a broker crash: a broker process of its own (not the run's
 * shared one) is SIGKILLed under two members. Both see alive() false once a session has
 * passed without a heartbeat, and are told through onLost; they keep trying while the broker
 * is down, and once it is back on the same data they form a new generation and share the
 * partitions again, without being rejoined by hand.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { isRunlogError, type RunlogError } from '../../src/errors.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { joinGroup, type GroupAssignment, type GroupMembership } from '../../src/log/kafka/group-membership.ts';
// @ts-expect-error: plain ESM JavaScript without type declarations
import { startBroker } from '../broker/broker.mjs';
import { onCleanup } from '../support/cleanup.ts';
import { uniqueTopic } from './kafka-test-support.ts';

interface Broker {
  brokers: string;
  stop(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
}

const SESSION_MS = 6_000;

async function until(what: string, condition: () => boolean, withinMs: number, explain: () => string): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > deadline) assert.fail(`${what}: not within ${withinMs} ms (${explain()})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('group membership: the broker crashes and comes back', () => {
  it(
    'members see alive() false and onLost while it is down, keep trying, and share the partitions again once it is back',
    { timeout: 240_000 },
    async (t) => {
      const broker: Broker = await startBroker({ port: 0 });
      onCleanup(t, () => broker.stop());
      const topic = uniqueTopic('runlog-membership-crash');
      const log = await openKafkaLog({ brokers: [broker.brokers], topic, partitions: 4 });
      await log.close();

      const group = `g-${randomUUID()}`;
      const seen = new Map<string, { assignments: GroupAssignment[]; losses: RunlogError[]; membership: GroupMembership }>();
      for (const name of ['a', 'b']) {
        const record = { assignments: [] as GroupAssignment[], losses: [] as RunlogError[] };
        const membership = await joinGroup({
          brokers: [broker.brokers],
          topic,
          group,
          self: { node: `node-${name}`, url: `http://${name}.invalid:7070` },
          sessionTimeoutMs: SESSION_MS,
          heartbeatIntervalMs: 300,
          onAssignment: (a) => record.assignments.push(a),
          onLost: (e) => record.losses.push(e),
        });
        onCleanup(t, () => membership.leave());
        seen.set(name, { ...record, membership });
      }
      const members = [...seen.values()];
      const explain = () =>
        [...seen]
          .map(([name, m]) => `${name}: generations ${m.assignments.map((a) => a.generation).join(',')}; ${m.losses.length} lost`)
          .join('; ');
      const bothIn = (generationAbove: number) => () => {
        const current = members.map((m) => m.membership.current());
        return current.every((c) => c !== null && c.generation > generationAbove && c.members.length === 2 && c.mine.length === 2);
      };
      await until('both members sharing the partitions', bothIn(0), 60_000, explain);
      const before = members[0]!.membership.current()!.generation;

      const killedAt = performance.now();
      await broker.kill();
      await until('both members told their membership is lost', () => members.every((m) => m.losses.length > 0), 60_000, explain);
      t.diagnostic(`from the broker's SIGKILL to onLost on both: ${Math.round(performance.now() - killedAt)} ms`);
      for (const m of members) {
        assert.equal(m.membership.alive(), false);
        assert.equal(m.membership.current(), null);
        assert.ok(isRunlogError(m.losses[0], 'LogUnavailable'), String(m.losses[0]));
      }

      await broker.restart();
      const restartedAt = performance.now();
      await until('both members sharing the partitions again', bothIn(before), 120_000, explain);
      t.diagnostic(`from the broker being back to a new generation on both: ${Math.round(performance.now() - restartedAt)} ms`);
      for (const m of members) assert.equal(m.membership.alive(), true);
      const [a, b] = members.map((m) => m.membership.current()!);
      assert.deepEqual(a!.owners, b!.owners, 'one owners map again');
      assert.deepEqual([...a!.mine, ...b!.mine].sort(), [0, 1, 2, 3]);
    },
  );
});
