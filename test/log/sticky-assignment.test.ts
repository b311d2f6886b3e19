import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stickyAssignment, type MemberClaim } from '../../src/log/kafka/sticky-assignment.ts';

/** A group: 1 to 4 members with distinct keys, each claiming partitions (some out of range, some contested). */
function groupArbitrary(maxPartitions: number, maxMembers: number) {
  return fc.integer({ min: 1, max: maxPartitions }).chain((partitions) =>
    fc
      .uniqueArray(
        fc.record({
          key: fc.string({ minLength: 1, maxLength: 3 }),
          owned: fc.array(fc.integer({ min: -1, max: partitions }), { maxLength: partitions + 1 }),
          generation: fc.integer({ min: 0, max: 3 }),
        }),
        { minLength: 1, maxLength: maxMembers, selector: (m) => m.key },
      )
      .map((members) => ({ partitions, members: members as MemberClaim[] })),
  );
}

function countsOf(owners: readonly number[], members: number): number[] {
  const counts = new Array<number>(members).fill(0);
  for (const owner of owners) counts[owner]!++;
  return counts;
}

/** Written independently of the implementation: the claimant of p is the claiming member of the newest generation, then the smallest key. */
function claimantOf(p: number, members: readonly MemberClaim[]): number {
  let best = -1;
  members.forEach((m, i) => {
    if (!m.owned.includes(p)) return;
    const b = members[best];
    if (b === undefined || m.generation > b.generation || (m.generation === b.generation && m.key < b.key)) best = i;
  });
  return best;
}

function keptCount(owners: readonly number[], members: readonly MemberClaim[]): number {
  return owners.filter((owner, p) => owner === claimantOf(p, members)).length;
}

/** The most partitions any balanced assignment keeps with their claimants, by trying every assignment. */
function bestKept(partitions: number, members: readonly MemberClaim[]): number {
  let best = 0;
  const owners = new Array<number>(partitions).fill(0);
  const visit = (p: number): void => {
    if (p === partitions) {
      const counts = countsOf(owners, members.length);
      if (Math.max(...counts) - Math.min(...counts) <= 1) best = Math.max(best, keptCount(owners, members));
      return;
    }
    for (let i = 0; i < members.length; i++) {
      owners[p] = i;
      visit(p + 1);
    }
  };
  visit(0);
  return best;
}

describe('stickyAssignment (the runlog-sticky protocol)', () => {
  it('gives every partition exactly one member, balanced (counts differ by at most 1)', () => {
    fc.assert(
      fc.property(groupArbitrary(40, 7), ({ partitions, members }) => {
        const owners = stickyAssignment(partitions, members);
        assert.equal(owners.length, partitions);
        for (const owner of owners) assert.ok(Number.isInteger(owner) && owner >= 0 && owner < members.length, `owner ${owner}`);
        const counts = countsOf(owners, members.length);
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `counts ${counts.join('/')}`);
      }),
    );
  });

  it('moves the fewest partitions any balanced assignment could (checked against every assignment)', () => {
    fc.assert(
      fc.property(groupArbitrary(7, 3), ({ partitions, members }) => {
        assert.equal(keptCount(stickyAssignment(partitions, members), members), bestKept(partitions, members));
      }),
    );
  });

  it('is deterministic: the members order does not matter', () => {
    fc.assert(
      fc.property(
        groupArbitrary(20, 5).chain((group) =>
          fc.shuffledSubarray(group.members, { minLength: group.members.length }).map((shuffled) => ({ ...group, shuffled })),
        ),
        ({ partitions, members, shuffled }) => {
          const byKey = (claims: readonly MemberClaim[], owners: readonly number[]) => owners.map((i) => claims[i]!.key);
          assert.deepEqual(byKey(shuffled, stickyAssignment(partitions, shuffled)), byKey(members, stickyAssignment(partitions, members)));
        },
      ),
    );
  });

  it('is stable: members claiming their last assignment keep all of it', () => {
    fc.assert(
      fc.property(groupArbitrary(30, 6), ({ partitions, members }) => {
        const owners = stickyAssignment(partitions, members);
        const again = members.map((m, i) => ({ key: m.key, generation: 9, owned: owners.flatMap((o, p) => (o === i ? [p] : [])) }));
        assert.deepEqual(stickyAssignment(partitions, again), owners);
      }),
    );
  });

  it('spreads 8 partitions 3/3/2; a leaver is shared out; a late member takes only its share', () => {
    const fresh = ['a', 'b', 'c'].map((key) => ({ key, owned: [], generation: 0 }));
    const first = stickyAssignment(8, fresh);
    assert.deepEqual(countsOf(first, 3).sort(), [2, 3, 3]);
    const ownedBy = (owners: number[], i: number) => owners.flatMap((o, p) => (o === i ? [p] : []));

    const survivors = [0, 2].map((i) => ({ key: fresh[i]!.key, owned: ownedBy(first, i), generation: 1 }));
    const second = stickyAssignment(8, survivors);
    assert.deepEqual(countsOf(second, 2), [4, 4]);
    survivors.forEach((m, i) => m.owned.forEach((p) => assert.equal(second[p], i, `partition ${p} stays with ${m.key}`)));

    const withLate = [
      ...survivors.map((m, i) => ({ ...m, owned: ownedBy(second, i), generation: 2 })),
      { key: 'd', owned: [], generation: 0 },
    ];
    const third = stickyAssignment(8, withLate);
    assert.deepEqual(countsOf(third, 3).sort(), [2, 3, 3]);
    const moved = third.filter((owner, p) => owner !== second[p]).length;
    assert.equal(moved, 2, 'the late member takes 2 partitions, nothing else moves');
  });

  it('refuses a group without members', () => {
    assert.throws(() => stickyAssignment(4, []), RangeError);
  });
});
