/**
 * PartitionLead (src/queue/partition-lead.ts), for any store times that never go back: the
 * partition's time never goes back either, never falls below the latest event it followed,
 * runs at the store clock's rate less at most 500 ppm, and the lead only shrinks until followed again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { PartitionLead } from '../../src/queue/partition-lead.ts';

const steps = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('pass' as const), ms: fc.integer({ min: 0, max: 10_000_000 }) }),
    fc.record({ kind: fc.constant('follow' as const), ahead: fc.integer({ min: -3_600_000, max: 3_600_000 }), kept: fc.boolean() }),
  ),
  { maxLength: 60 },
);

test('a partition time never goes back, never precedes the event it followed, and runs at the store rate within 500 ppm', () => {
  fc.assert(
    fc.property(steps, (plan) => {
      const lead = new PartitionLead();
      let store = 1_700_000_000_000;
      let last = lead.at(store);
      for (const step of plan) {
        if (step.kind === 'pass') {
          const time = lead.at((store += step.ms));
          assert.ok(time >= last, `went back from ${last} to ${time}`);
          assert.ok(time - last <= step.ms + 1, `ran faster than the store clock: ${time - last} in ${step.ms}`);
          assert.ok(time - last >= step.ms * (1 - 500e-6) - 1, `ran slower than 500 ppm: ${time - last} in ${step.ms}`);
          last = time;
        } else {
          const lastAt = store + step.ahead;
          lead.follow(lastAt, store, step.kind === 'follow' && step.kept);
          const time = lead.at(store);
          assert.ok(time >= lastAt, `${time} precedes the latest event ${lastAt}`);
          if (step.kept) assert.ok(time >= last, `a kept lead went back from ${last} to ${time}`);
          assert.ok(lead.ms >= 0);
          last = time;
        }
      }
    }),
  );
});

test('times move between store time and the partition time by the lead', () => {
  const lead = new PartitionLead();
  assert.equal(lead.follow(1_000_000 + 5_000, 1_000_000, false), 5_000);
  assert.equal(lead.ahead(2_000_000), 2_005_000);
  assert.equal(lead.behind(2_005_000), 2_000_000);
  assert.equal(lead.follow(900_000, 1_000_000, false), 0, 'an acquired view behind store time has no lead');
});
