/**
 * Where a replay's decoder (Codec.foldDecoder) copies the bytes fields V8 would not keep on its
 * own heap (an input or a result of more than 64 bytes): views of shared 64 KiB slabs, filled in
 * order and never written again, instead of an ArrayBuffer each. A new Uint8Array of 65 bytes or
 * more costs a native backing store: ~1.2 µs, against ~36 ns for one of 64 (Node 20, 2026-12-07).
 * A replay of lifecycles with 100-byte inputs spent more of its time making those than folding.
 *
 * A slab lives while any view of it does, and nearly every view a replay makes dies with its
 * entry's close. The entries still open when a catch-up ends would each keep a slab (and all the
 * closed inputs in it) alive, so the catch-up moves their inputs out of the slabs then
 * (src/projector/replay.ts), into arrays of their own; `isFoldSlab` tells which to move. It then
 * lets go of the read buffer it copied from last (releaseSlabSource).
 */

/** A slab's size; values of OWN_BUFFER_BYTES or more get a buffer of their own. */
const SLAB_BYTES = 64 << 10;
const OWN_BUFFER_BYTES = 4 << 10;

/** Every slab made (weakly: a slab no view holds is collected). */
const slabBuffers = new WeakSet<ArrayBufferLike>();
let slab = new Uint8Array(0);
let slabUsed = 0;

/**
 * The last source copied from, and a plain Uint8Array over its bytes: the bytes to copy are a
 * subarray of that (a Buffer's subarray runs Buffer's constructor: ~280 against ~130 ns a copy
 * of 100 bytes). A replay reads from one reused buffer a chunk at a time.
 */
let lastSource: Uint8Array | null = null;
let sourceBytes: Uint8Array = new Uint8Array(0);

/** A copy of bytes [start, start + length) of `source`, never changed after (a view of a slab, or its own buffer). */
export function slabCopy(source: Uint8Array, start: number, length: number): Uint8Array {
  if (source !== lastSource) {
    lastSource = source;
    sourceBytes = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  }
  const bytes = sourceBytes.subarray(start, start + length);
  if (length >= OWN_BUFFER_BYTES) return bytes.slice();
  if (slabUsed + length > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    slabBuffers.add(slab.buffer);
    slabUsed = 0;
  }
  const copy = slab.subarray(slabUsed, slabUsed + length);
  copy.set(bytes);
  slabUsed += length;
  return copy;
}

/**
 * Lets go of the last source (a replay's read buffer, a MiB or more) and of the slab being
 * filled once a catch-up ends: the next copy starts a new one.
 */
export function releaseSlabSource(): void {
  lastSource = null;
  sourceBytes = new Uint8Array(0);
  slab = new Uint8Array(0);
  slabUsed = 0;
}

/** Whether `buffer` is one of slabCopy's slabs. */
export function isFoldSlab(buffer: ArrayBufferLike): boolean {
  return slabBuffers.has(buffer);
}
