/** A hand-written Avro binary encoder for tests: builds bodies byte by byte, without avsc. */
export function avroLong(n: bigint | number): number[] {
  let z = BigInt.asUintN(64, (BigInt(n) << 1n) ^ (BigInt(n) >> 63n)); // zigzag
  const out: number[] = [];
  do {
    const low = Number(z & 0x7fn);
    z >>= 7n;
    out.push(z > 0n ? low | 0x80 : low);
  } while (z > 0n);
  return out;
}

export function avroString(s: string): number[] {
  const utf8 = new TextEncoder().encode(s);
  return [...avroLong(utf8.length), ...utf8];
}

/** Single-object encoding: marker, fingerprint little-endian, body. */
export function singleObject(fingerprint: bigint, body: readonly number[]): Uint8Array {
  const header = new Uint8Array(10);
  header.set([0xc3, 0x01]);
  new DataView(header.buffer).setBigUint64(2, fingerprint, true);
  return Uint8Array.from([...header, ...body]);
}
