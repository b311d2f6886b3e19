/**
 * Encoded records are copied out of the codec's scratch buffer into 16 KiB slabs and handed
 * out as views (as the file log's reader hands out values: frame.ts): one ArrayBuffer per
 * record costs more than encoding it. A view keeps at most its slab alive; records of
 * OWN_BUFFER_BYTES or more get a buffer of their own.
 */
const SLAB_BYTES = 16 << 10;
const OWN_BUFFER_BYTES = 2 << 10;

let slab = new Uint8Array(SLAB_BYTES);
let slabUsed = 0;

/**
 * The last source copied from, and a plain Uint8Array over its bytes: the bytes to copy are a
 * subarray of it, not of the Buffer (whose subarray runs Buffer's constructor: twice the cost).
 * The codec's scratch buffer is the only source, so it is made once.
 */
let lastSource: Buffer | null = null;
let sourceBytes: Uint8Array = new Uint8Array(0);

/** A copy of bytes [0, end) of `source`, as a plain Uint8Array (a view of a slab, or its own buffer). */
export function copyToSlab(source: Buffer, end: number): Uint8Array {
  if (source !== lastSource) {
    lastSource = source;
    sourceBytes = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  }
  if (end >= OWN_BUFFER_BYTES) return sourceBytes.slice(0, end); // a copy of its own
  if (slabUsed + end > SLAB_BYTES) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  // subarray, not `new Uint8Array(buffer, offset, length)`: V8 makes it about twice as fast.
  const copy = slab.subarray(slabUsed, slabUsed + end);
  copy.set(sourceBytes.subarray(0, end));
  slabUsed += end;
  return copy;
}
