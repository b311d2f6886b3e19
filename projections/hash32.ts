/**
 * 32-bit hashes for the ticket index's tables (ticket-index.ts). Of a string: FNV-1a over the
 * string's UTF-16 code units, then murmur3's finaliser to spread the bits; part of the index's
 * column format (a snapshot stores these hashes): never change it without a new format. Of a
 * seq (seqHash): computed again at every load, never stored. Not for security: a hit is always
 * checked against the entry itself.
 */
export function hash32(text: string): number {
  return finish(fnv(FNV_OFFSET, text));
}

/**
 * The state hash32 reaches after `a`, NUL, `b`, NUL, without joining them: a thread's key
 * (closed-tickets.ts), kept per thread (thread-state.ts), so each of its hashes reads only `c`.
 */
export function hash32Seed(a: string, b: string): number {
  let h = fnv(FNV_OFFSET, a);
  h = Math.imul(h, FNV_PRIME); // NUL: h ^= 0
  h = fnv(h, b);
  return Math.imul(h, FNV_PRIME);
}

/** hash32 of `a`, NUL, `b`, NUL, `c` from hash32Seed(a, b): a run id or a submission key with its thread's key. */
export function hash32After(seed: number, c: string): number {
  return finish(fnv(seed, c));
}

/** A seq's hash for the table by seq (ticket-index.ts; a seq may pass 2^32). */
export function seqHash(seq: number): number {
  let h = Math.imul((seq >>> 0) ^ Math.floor(seq / 4294967296), 0x9e3779b1);
  h ^= h >>> 15;
  return Math.imul(h, 0x85ebca6b) >>> 0;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a of `text`'s UTF-16 code units, continuing from `h`. */
function fnv(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h;
}

/** murmur3's finaliser: spreads FNV's bits over all 32. */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
