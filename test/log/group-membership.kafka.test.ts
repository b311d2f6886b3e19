/**
 * The group membership on the real broker: members of one group over an 8-partition events
 * topic share its partitions (runlog-sticky: balanced, sticky, one owners map for all), a
 * leaver's partitions go to the others at once, a late member takes its share, and a member
 * whose session expires (its event loop blocked past the session timeout) sees alive() false,
 * is told through onLost, and joins again.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError, type RunlogError } from '../../src/errors.ts';
import { joinGroup, type GroupAssignment, type GroupMembership, type MembershipOptions } from '../../src/log/kafka/group-membership.ts';
import { onCleanup } from '../support/cleanup.ts';
import { kafkaBrokers, openTestKafkaLog, uniqueTopic } from './kafka-test-support.ts';

// The broker's group.min.session.timeout.ms is 6 s by default.
const SESSION_MS = 6_000;
const HEARTBEAT_MS = 300;
const PARTITIONS = 8;

interface Member {
  name: string;
  url: string;
  membership: GroupMembership;
  assignments: GroupAssignment[];
  losses: RunlogError[];
}

async function join(t: TestContext, topic: string, group: string, name: string, extra: Partial<MembershipOptions> = {}): Promise<Member> {
  const assignments: GroupAssignment[] = [];
  const losses: RunlogError[] = [];
  const url = `http://${name}.invalid:7070`;
  const membership = await joinGroup({
    brokers: kafkaBrokers(),
    topic,
    group,
    self: { node: `node-${name}`, url },
    sessionTimeoutMs: SESSION_MS,
    heartbeatIntervalMs: HEARTBEAT_MS,
    onAssignment: (a) => assignments.push(a),
    onLost: (e) => losses.push(e),
    ...extra,
  });
  onCleanup(t, () => membership.leave());
  return { name, url, membership, assignments, losses };
}

/** Polls `probe` until it answers; past the deadline, fails showing what each member saw. */
async function until<T>(what: string, probe: () => T | undefined, members: readonly Member[], timeoutMs = 30_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}: ${members.map(seen).join('; ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function seen(m: Member): string {
  const generations = m.assignments.map((a) => `${a.generation}:[${a.mine.join(',')}]`).join(' ');
  return `${m.name} alive=${m.membership.alive()} assignments ${generations} losses ${m.losses.map((e) => e.message).join(' | ')}`;
}

/** Once every member holds the same generation, of exactly these members: that generation's assignments. */
function settled(members: readonly Member[]): GroupAssignment[] | undefined {
  const current = members.map((m) => m.membership.current());
  const generation = current[0]?.generation;
  const agree = current.every((a) => a !== null && a.generation === generation && a.members.length === members.length);
  return agree ? (current as GroupAssignment[]) : undefined;
}

/** Every member has the same owners map, naming each partition's owner (its node and URL), and the same members. */
function assertOneMap(members: readonly Member[], assignments: readonly GroupAssignment[]): void {
  const [first] = assignments;
  for (const a of assignments) {
    assert.deepEqual(a.owners, first!.owners);
    assert.deepEqual(a.members, first!.members);
  }
  assert.deepEqual(first!.members.map((m) => m.url).sort(), members.map((m) => m.url).sort());
  members.forEach((member, i) => {
    for (const p of assignments[i]!.mine) assert.deepEqual(first!.owners[p], { node: `node-${member.name}`, url: member.url });
  });
  const all = assignments.flatMap((a) => a.mine).sort((x, y) => x - y);
  assert.deepEqual(all, [...Array(PARTITIONS).keys()], 'every partition has exactly one owner');
}

const counts = (assignments: readonly GroupAssignment[]): number[] => assignments.map((a) => a.mine.length).sort();

interface ChildLine {
  event: 'assignment' | 'lost' | 'alive';
  generation?: number;
  mine?: number[];
  members?: number;
  alive?: boolean;
  code?: string;
}

/** A member in a child process (membership-child.ts), which the test can SIGSTOP; its lines as they come. */
function spawnMember(t: TestContext, topic: string, group: string, name: string): { pid: number; lines: ChildLine[] } {
  const script = new URL('./membership-child.ts', import.meta.url).pathname;
  const args = [topic, group, name, String(SESSION_MS), String(HEARTBEAT_MS)];
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  onCleanup(t, async () => {
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
  });
  const lines: ChildLine[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line) as ChildLine));
  return { pid: child.pid!, lines };
}

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('group membership (Kafka)', () => {
  it('spreads 8 partitions 3/3/2 with one owners map; a leaver is shared out at once; a late member takes its share, nothing else moves', async (t) => {
    const { topic } = await openTestKafkaLog(t, PARTITIONS);
    const group = `g-${randomUUID()}`;
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => join(t, topic, group, name)));
    const three = await until('three members to settle', () => settled([a!, b!, c!]), [a!, b!, c!]);
    assert.deepEqual(counts(three), [2, 3, 3]);
    assertOneMap([a!, b!, c!], three);
    for (const m of [a!, b!, c!]) assert.equal(m.membership.alive(), true);

    const leftAt = performance.now();
    await c!.membership.leave();
    assert.equal(c!.membership.current(), null);
    assert.equal(c!.membership.alive(), false);
    const two = await until('the two others to settle', () => settled([a!, b!]), [a!, b!]);
    t.diagnostic(`from leave() to the new assignment: ${Math.round(performance.now() - leftAt)} ms (generation ${two[0]!.generation})`);
    assert.deepEqual(counts(two), [4, 4]);
    assertOneMap([a!, b!], two);
    [a!, b!].forEach((m, i) => {
      for (const p of three[i]!.mine) assert.ok(two[i]!.mine.includes(p), `${m.name} kept partition ${p}`);
    });

    const d = await join(t, topic, group, 'd');
    const late = await until('the late member to settle', () => settled([a!, b!, d]), [a!, b!, d]);
    assert.deepEqual(counts(late), [2, 3, 3]);
    assertOneMap([a!, b!, d], late);
    [a!, b!].forEach((m, i) => {
      for (const p of late[i]!.mine) assert.ok(two[i]!.mine.includes(p), `${m.name} gained nothing (partition ${p})`);
    });
    assert.equal(late[2]!.mine.length, 2, 'the late member took its 2, and only those moved');

    for (const m of [a!, b!, d]) {
      const generations = m.assignments.map((x) => x.generation);
      assert.deepEqual(
        generations,
        [...generations].sort((x, y) => x - y),
        `${m.name}: one assignment per generation, in order`,
      );
      assert.equal(new Set(generations).size, generations.length);
      assert.deepEqual(m.losses, []);
    }
  });

  it('a member whose event loop stalls past its session: alive() is false at once, onLost follows, and it joins again', async (t) => {
    const { topic } = await openTestKafkaLog(t, PARTITIONS);
    const member = await join(t, topic, `g-${randomUUID()}`, 'stalled');
    const before = member.membership.current()!;
    assert.deepEqual(before.mine, [...Array(PARTITIONS).keys()]);
    assert.equal(member.membership.alive(), true);

    busyWait(SESSION_MS + 1_500); // no timer, no heartbeat, no answer read: the coordinator expires the session meanwhile
    assert.equal(member.membership.alive(), false, 'a stale view is refused before anything else runs');

    const lost = await until('onLost', () => member.losses[0], [member]);
    assert.ok(isRunlogError(lost, 'LogUnavailable'), `lost: ${lost}`);
    t.diagnostic(`onLost: ${lost.message}`);
    const again = await until('a new assignment', () => member.assignments.find((a) => a.generation > before.generation), [member]);
    assert.deepEqual(again.mine, before.mine);
    assert.equal(member.membership.alive(), true);
    assert.equal(member.losses.length, 1);
  });

  it('a member SIGSTOPped past its session: the other takes everything; resumed, it sees alive() false before anything else, is told through onLost, and gets its share back', async (t) => {
    const { topic } = await openTestKafkaLog(t, PARTITIONS);
    const group = `g-${randomUUID()}`;
    const a = await join(t, topic, group, 'a');
    const b = spawnMember(t, topic, group, 'b');
    const lastOf = (event: ChildLine['event']) => b.lines.filter((l) => l.event === event).at(-1);
    const both = await until(
      'both members to settle',
      () => {
        const mine = a.membership.current();
        const theirs = lastOf('assignment');
        const aliveThere = lastOf('alive')?.alive === true;
        return aliveThere && mine?.members.length === 2 && theirs?.generation === mine.generation ? mine : undefined;
      },
      [a],
    );
    assert.equal(both.mine.length, 4);

    const stoppedAt = performance.now();
    process.kill(b.pid, 'SIGSTOP');
    const alone = await until(
      'the other member to own everything',
      () => {
        const mine = a.membership.current();
        return mine?.members.length === 1 ? mine : undefined;
      },
      [a],
    );
    t.diagnostic(`from SIGSTOP to the other member owning every partition: ${Math.round(performance.now() - stoppedAt)} ms`);
    assert.deepEqual(alone.mine, [...Array(PARTITIONS).keys()]);
    const seenBefore = b.lines.length;

    process.kill(b.pid, 'SIGCONT');
    const rejoined = await until(
      'the resumed member to get its share back',
      () => {
        const mine = a.membership.current();
        const theirs = lastOf('assignment');
        // alive() is polled every 20 ms in the child, so its alive=true line may follow the assignment line.
        const aliveAgain = lastOf('alive')?.alive === true;
        return mine?.members.length === 2 && theirs?.generation === mine.generation && theirs.generation > alone.generation && aliveAgain
          ? theirs
          : undefined;
      },
      [a],
    );
    // Timers run before any answer is read: alive() turns false (and the watchdog reports the loss) before a new assignment.
    const after = b.lines.slice(seenBefore).map((l) => (l.event === 'assignment' ? l.event : `${l.event}=${l.alive}`));
    assert.deepEqual(after.slice(0, 2).sort(), ['alive=false', 'lost=false'], `the resumed member's lines: ${after.join(', ')}`);
    assert.deepEqual(after.slice(2).sort(), ['alive=true', 'assignment'], `the resumed member's lines: ${after.join(', ')}`);
    assert.equal(rejoined.mine!.length, 4);
    assert.deepEqual(a.losses, []);
  });

  it('a topic that does not exist, or a session the broker refuses, is InvalidArgument', async (t) => {
    const missing = uniqueTopic('runlog-missing');
    const base = {
      brokers: kafkaBrokers(),
      group: `g-${randomUUID()}`,
      self: { node: 'n', url: 'http://127.0.0.1:1' },
      onAssignment: () => undefined,
      onLost: () => undefined,
    };
    await assert.rejects(
      joinGroup({ ...base, topic: missing }),
      (e: unknown) => isRunlogError(e, 'InvalidArgument') && e.message.includes(missing),
    );
    const { topic } = await openTestKafkaLog(t, 1);
    // Below the broker's group.min.session.timeout.ms (6 s): no retry would ever be let in.
    await assert.rejects(
      joinGroup({ ...base, topic, sessionTimeoutMs: 1_000, heartbeatIntervalMs: 100 }),
      (e: unknown) => isRunlogError(e, 'InvalidArgument') && /session/i.test(e.message),
    );
  });
});
