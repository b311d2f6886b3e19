/**
 * Closes for the ticket index (projections/ticket-index.ts) made one after another from a
 * seed, in the order a partition folds them, shaped to reach its corners: many tenants (its
 * tenant chunks widen past 256 and 65,536), seqs, offsets and close times jumping past 2^32
 * (its wide maps, Int32 deltas), close times stepping back (late rows), 0..n attempts, keys,
 * deferred attempts. Every seq, key hash and run hash made is kept, for lookups.
 */
import type { ClosingTicket, TicketRecords } from '../../projections/ticket-index.ts';

const OUTCOMES = ['succeeded', 'failed', 'cancelled', 'expired', 'threadDeleted'] as const;

/** A small seeded generator (mulberry32): each run's operations follow from its seed. */
export function randomFrom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How the closes of a run look. */
export interface CloseShape {
  /** Distinct tenants drawn from (a new tenant every close when it is Infinity). */
  tenants: number;
  /** Chance of a close whose seq, offsets or close time jump past 2^32 (the wide maps, Int32 deltas). */
  far: number;
  /** Chance of a close time stepping back (a late row). */
  late: number;
  /** Most attempts a close has. */
  maxAttempts: number;
}

/** Makes closes one after another, in the order a partition folds them. */
export class Closes {
  #seq = 0;
  #clock = 1_700_000_000_000;
  #offset = 0;
  #tenant = 0;
  readonly seqs: number[] = [];
  readonly keyHashes = new Set<number>();
  readonly runHashes = new Set<number>();

  constructor(
    readonly random: () => number,
    readonly shape: CloseShape,
  ) {}

  next(): { ticket: ClosingTicket; records: TicketRecords } {
    const { random, shape } = this;
    const far = (): boolean => random() < shape.far;
    this.#seq += far() ? 2 ** 33 + 1 : 1;
    this.#clock += far() ? 2 ** 32 : Math.floor(random() * 1_000);
    const closedAt = random() < shape.late ? this.#clock - 1 - Math.floor(random() * 50_000) : this.#clock;
    const tenant = shape.tenants === Infinity ? this.#tenant++ : Math.floor(random() * shape.tenants);
    const keyHash = random() < 0.4 ? Math.floor(random() * 4096) * 977 : null; // few hashes: rows share them
    const runHashes = Array.from({ length: Math.floor(random() * (shape.maxAttempts + 1)) }, () => Math.floor(random() * 8192) * 523);
    const submittedOffset = (this.#offset += far() ? 2 ** 33 : 1 + Math.floor(random() * 3));
    const attemptOffsets = runHashes.map(() => (this.#offset += far() ? 2 ** 33 : 1));
    const closeOffset = (this.#offset += far() ? 2 ** 33 : 1);
    this.seqs.push(this.#seq);
    if (keyHash !== null) this.keyHashes.add(keyHash);
    for (const hash of runHashes) this.runHashes.add(hash);
    return {
      ticket: {
        seq: this.#seq,
        tenant: `tenant-${tenant}`,
        outcome: OUTCOMES[Math.floor(random() * OUTCOMES.length)]!,
        closedAt,
        keyHash,
        runHashes,
        deferredAttempts: random() < 0.2 ? 1 + Math.floor(random() * 5) : 0,
      },
      records: { submittedOffset, attemptOffsets, closeOffset },
    };
  }
}
