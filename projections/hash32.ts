/**
 * A 32-bit hash of a string, for the ticket index's tables (ticket-index.ts): FNV-1a over
 * the string's UTF-16 code units, then murmur3's finaliser to spread the bits. Part of the
 * index's column format (a snapshot stores hashes): never change it without a new format.
 * Not for security: a hit is always checked against the entry itself.
 */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
