/**
 * The partition of a thread: Kafka's default partitioner applied to the thread key,
 * toPositive(murmur2(keyBytes)) % partitions, so producers in any language agree.
 * The bytes hashed are the UTF-8 of the thread key (src/events/keys.ts).
 */
import { threadKey } from '../events/keys.ts';
import { describe, isWellFormed } from '../validation/index.ts';
import { invalidArgument } from '../errors.ts';
import { checkPartitionCount } from './log-arguments.ts';

const encoder = new TextEncoder();

export function threadKeyBytes(tenant: string, thread: string): Uint8Array {
  return encoder.encode(threadKey(tenant, thread));
}

export function partitionOf(tenant: string, thread: string, partitions: number): number {
  checkKeyPart('tenant', tenant);
  checkKeyPart('thread', thread);
  checkPartitionCount(partitions);
  if (partitions === 1) return 0; // the file log's default: no key to encode and hash
  return toPositive(murmur2(threadKeyBytes(tenant, thread))) % partitions;
}

/**
 * Any string but one with a lone UTF-16 surrogate: encoders disagree on its bytes (U+FFFD
 * here, "?" in Java), so producers in other languages would pick another partition.
 */
function checkKeyPart(name: string, value: unknown): void {
  if (typeof value !== 'string' || !isWellFormed(value))
    throw invalidArgument(`${name} must be a string of well-formed text, got ${describe(value)}`);
}

/** Kafka's `Utils.toPositive`: clears the sign bit (not Math.abs). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** Kafka's `Utils.murmur2` (32-bit, seed 0x9747b28c), as a signed 32-bit int. */
export function murmur2(data: Uint8Array): number {
  const m = 0x5bd1e995;
  const length = data.length;
  let h = 0x9747b28c ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24) | 0;
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2]! << 16;
  if (rest >= 2) h ^= data[whole + 1]! << 8;
  if (rest >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}
