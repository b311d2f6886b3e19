/**
 * The ticket index's lookup tables (projections/ticket-index.ts): rows go into them only when
 * a lookup next needs them, one by one while they have room, else by a rebuild of every table
 * from the live rows. Whatever adds, prunes and lookups are interleaved, and wherever the
 * tables were last filled, every lookup answers exactly what a plain model of the live rows
 * says: by seq, by key hash, by run-id hash (hashes drawn from a few values, so they collide).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TicketIndex, type ClosingTicket } from '../../projections/ticket-index.ts';

interface Model {
  seq: number;
  keyHash: number | null;
  runHashes: number[];
}

type Step =
  | { kind: 'add'; count: number; keyed: number; attempts: number; hashSeed: number }
  | { kind: 'prune'; count: number }
  | { kind: 'remove'; pick: number }
  | { kind: 'look' }
  | { kind: 'reload' };

const HASHES = 7;

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('add' as const),
    count: fc.integer({ min: 1, max: 200 }),
    keyed: fc.integer({ min: 0, max: 3 }),
    attempts: fc.integer({ min: 0, max: 3 }),
    hashSeed: fc.nat(),
  }),
  fc.record({ kind: fc.constant('prune' as const), count: fc.integer({ min: 1, max: 150 }) }),
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  fc.constant({ kind: 'look' as const }),
  fc.constant({ kind: 'reload' as const }),
);

function closing(m: Model, closedAt: number): ClosingTicket {
  return { seq: m.seq, tenant: 't', outcome: 'succeeded', closedAt, keyHash: m.keyHash, runHashes: m.runHashes, deferredAttempts: 0 };
}

function records(m: Model): { submittedOffset: number; closeOffset: number; attemptOffsets: number[] } {
  const base = m.seq * 10;
  return { submittedOffset: base, closeOffset: base + 9, attemptOffsets: m.runHashes.map((_, n) => base + 1 + n) };
}

/** Every lookup, against the live rows of the model. */
function lookAll(index: TicketIndex, live: Map<number, Model>, gone: readonly number[]): void {
  assert.equal(index.size, live.size);
  for (const m of live.values()) assert.equal(index.seqOf(index.rowOf(m.seq)), m.seq, `seq ${m.seq}`);
  for (const seq of gone) assert.equal(index.rowOf(seq), -1, `pruned seq ${seq}`);
  for (let hash = 0; hash < HASHES; hash++) {
    const byKey = [...live.values()].filter((m) => m.keyHash === hash).map((m) => m.seq);
    const byRun = [...live.values()].filter((m) => m.runHashes.includes(hash)).map((m) => m.seq);
    const sorted = (rows: number[]): number[] => rows.map((row) => index.seqOf(row)).sort((a, b) => a - b);
    assert.deepEqual(sorted(index.rowsByKey(hash)), byKey, `key hash ${hash}`);
    assert.deepEqual(sorted(index.rowsByRun(hash)), byRun, `run hash ${hash}`);
  }
}

describe('TicketIndex tables', () => {
  it('adds, prunes, removes and lookups in any order: every lookup answers the live rows (tables filled late, one by one or rebuilt)', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        let index = new TicketIndex();
        const live = new Map<number, Model>();
        const order: number[] = []; // seqs in close order, live or not
        const gone: number[] = [];
        let seq = 0;
        for (const s of steps) {
          if (s.kind === 'add') {
            for (let n = 0; n < s.count; n++) {
              const h = (s.hashSeed + n * 5) % HASHES;
              const m: Model = {
                seq: ++seq,
                keyHash: n % 4 < s.keyed ? h : null,
                runHashes: Array.from({ length: s.attempts }, (_, a) => (h + a * 3) % HASHES),
              };
              index.add(closing(m, seq), records(m));
              live.set(m.seq, m);
              order.push(m.seq);
            }
          } else if (s.kind === 'prune') {
            for (const row of index.oldest(s.count, () => true)) {
              const pruned = index.seqOf(row);
              index.remove(row);
              live.delete(pruned);
              gone.push(pruned);
            }
          } else if (s.kind === 'remove' && live.size > 0) {
            const picked = [...live.keys()][s.pick % live.size]!;
            index.remove(index.rowOf(picked));
            live.delete(picked);
            gone.push(picked);
          } else if (s.kind === 'look') {
            lookAll(index, live, gone);
          } else if (s.kind === 'reload') {
            index = TicketIndex.fromColumns(index.toColumns());
          }
        }
        lookAll(index, live, gone);
        assert.deepEqual(
          order.filter((s) => live.has(s)),
          [...live.keys()].sort((a, b) => a - b),
        );
      }),
      { numRuns: 150 },
    );
  });

  it('rows added and their front chunks pruned before any lookup: the lookups find exactly the rows left', () => {
    const index = new TicketIndex();
    const count = 150_000;
    const model = (n: number): Model => ({ seq: n + 1, keyHash: n % 3 === 0 ? n % HASHES : null, runHashes: [(n * 5) % HASHES] });
    for (let n = 0; n < count; n++) index.add(closing(model(n), n), records(model(n)));
    const pruned = 140_000; // past two whole chunks of rows (65,536 each): dropped with no table filled yet
    for (const row of index.oldest(pruned, () => true)) index.remove(row);
    const live = new Map<number, Model>();
    for (let n = pruned; n < count; n++) live.set(n + 1, model(n));
    lookAll(index, live, [1, 65_536, 131_072, pruned]);
    for (let n = count; n < count + 100; n++) index.add(closing(model(n), n), records(model(n)));
    for (let n = count; n < count + 100; n++) live.set(n + 1, model(n));
    lookAll(index, live, [pruned]);
  });
});
