/**
 * CRC-64-AVRO, the Rabin fingerprint the Avro specification defines for schemas
 * ("Schema Fingerprints"), over the UTF-8 bytes of a schema's Parsing Canonical Form.
 *
 * The spec's reference (Java, with `long` and `>>>`):
 *
 *   EMPTY = 0xc15d213aa4d7a795
 *   table[i]: fp = i; 8 times: fp = (fp >>> 1) ^ (EMPTY & -(fp & 1))
 *   fingerprint(buf): fp = EMPTY; for each byte b: fp = (fp >>> 8) ^ table[(fp ^ b) & 0xff]
 *
 * EMPTY is both the polynomial (reflected) and the initial value. BigInt keeps the 64-bit
 * unsigned arithmetic exact; it is slow-ish but fingerprints are computed once per schema
 * at module load, never per record.
 */

const MASK64 = 0xffff_ffff_ffff_ffffn;

/** The fingerprint of no bytes, and the polynomial. */
export const RABIN_EMPTY = 0xc15d_213a_a4d7_a795n;

const TABLE: readonly bigint[] = Array.from({ length: 256 }, (_, i) => {
  let fp = BigInt(i);
  for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (fp & 1n ? RABIN_EMPTY : 0n);
  return fp;
});

/** CRC-64-AVRO of `bytes`, as an unsigned 64-bit value. */
export function rabinFingerprint64(bytes: Uint8Array): bigint {
  let fp = RABIN_EMPTY;
  for (const b of bytes) {
    // `fp` stays within 64 bits: a right shift only shrinks it, table entries are < 2^64.
    fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(b)) & 0xffn)]!;
  }
  return fp & MASK64;
}

/** CRC-64-AVRO of a string's UTF-8 bytes (e.g. a Parsing Canonical Form). */
export function rabinFingerprintOf(text: string): bigint {
  return rabinFingerprint64(new TextEncoder().encode(text));
}

/** The signed view Java's `SchemaNormalization.parsingFingerprint64` returns. */
export function toSignedInt64(fp: bigint): bigint {
  return BigInt.asIntN(64, fp);
}

/** The 8 little-endian bytes single-object encoding puts after its marker. */
export function fingerprintBytesLE(fp: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, fp, true);
  return out;
}
