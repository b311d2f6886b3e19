/**
 * Exact Avro longs for JS numbers. Avro writes a long as a zigzag varint: z = 2n for n >= 0,
 * z = -2n - 1 for n < 0. avsc's stock long forms z as a double, which for negative n below
 * -2^52 is odd and above 2^53, so it is rounded: such values are silently read and written
 * wrong. These functions never form z: they work on the magnitude, split in exact parts,
 * and accept every safe integer (|n| <= Number.MAX_SAFE_INTEGER), refusing anything else.
 */

const TWO_POW_26 = 2 ** 26;
const TWO_POW_27 = 2 ** 27;

/**
 * The long in the zigzag varint `bytes` (exactly one varint, as avsc hands it over), or
 * throws if it is beyond Number.MAX_SAFE_INTEGER in magnitude.
 */
export function readExactLong(bytes: Uint8Array): number {
  // The low 28 bits of z (the first 4 bytes) as an int, the rest as an exact float.
  let low = 0;
  let i = 0;
  let byte = 0;
  do {
    byte = bytes[i]!;
    low |= (byte & 0x7f) << (7 * i);
    i++;
  } while (byte & 0x80 && i < 4);
  let high = 0;
  for (let scale = 1; byte & 0x80; scale *= 128) {
    byte = bytes[i++]!;
    high += (byte & 0x7f) * scale;
  }
  // |n| = floor(z / 2) for even z, (z + 1) / 2 for odd z; z = low + high * 2^28.
  const negative = low & 1;
  const magnitude = (negative ? (low + 1) / 2 : low >>> 1) + high * TWO_POW_27;
  if (high >= TWO_POW_26 || magnitude > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`long beyond Number.MAX_SAFE_INTEGER (varint of ${bytes.length} bytes)`);
  }
  return negative ? -magnitude : magnitude;
}

/** Scratch views of every varint length (1..10 bytes) over one buffer: no allocation per write. */
const SCRATCH = Buffer.alloc(10);
const VIEWS: readonly Buffer[] = Array.from({ length: 10 }, (_, i) => SCRATCH.subarray(0, i + 1));

/**
 * The zigzag varint of a safe integer, in a shared scratch buffer valid until the next call
 * (avsc copies it out at once).
 */
export function writeExactLong(n: number): Buffer {
  // For n < 0, z = 2(|n| - 1) + 1: an even, exactly representable number plus a low bit.
  let rest = n >= 0 ? n * 2 : (-n - 1) * 2;
  let lowBit = n < 0 ? 1 : 0;
  let i = 0;
  do {
    const byte = (rest % 128) | lowBit; // `rest` is an integer below 2^54: % is exact
    lowBit = 0;
    rest = Math.floor(rest / 128);
    SCRATCH[i++] = rest > 0 ? byte | 0x80 : byte;
  } while (rest > 0);
  return VIEWS[i - 1]!;
}

export function isExactLong(value: unknown): value is number {
  return Number.isSafeInteger(value);
}
