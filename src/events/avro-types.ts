/**
 * avsc types for runlog's schemas: every long exact (exact-long.ts), and avsc's validator
 * asked where an encoding failed. With codec.ts, the only importers of avsc.
 */
import avsc from 'avsc';
import { describe } from '../validation/index.ts';
import { isExactLong, readExactLong, writeExactLong } from './exact-long.ts';
import type { AvroRecordSchema } from './schemas.ts';

/**
 * avsc's own long rounds negative values below -2^52 without a word (see exact-long.ts);
 * this one is exact for every safe integer and refuses the rest. `noUnpack`: avsc hands
 * over and takes back the raw zigzag varint bytes.
 */
const EXACT_LONG = avsc.types.LongType.__with(
  {
    fromBuffer: readExactLong,
    toBuffer: writeExactLong,
    fromJSON: Number,
    toJSON: (n: number) => n,
    isValid: isExactLong,
    compare: (a: number, b: number) => a - b,
  },
  true,
);

export function avroType(schema: AvroRecordSchema): avsc.Type {
  // A fresh registry per schema: versions of one record share its name. Longs stay numbers
  // (no logical types registered: timestamp-millis decodes as a plain long).
  return avsc.Type.forSchema(structuredClone(schema) as avsc.Schema, { typeHook: exactLongHook });
}

/** avsc's reading position in a buffer (its Tap: the fields and the method a bytes reader uses). */
interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  _invalidate(): void;
}

/**
 * Bytes read as views of the input rather than copies (avsc copies each into a pooled
 * buffer): a snapshot's columns are hundreds of megabytes at 10M entries, copied twice on
 * the way (the envelope's state, then each column). Exactly avsc's BytesType#_read otherwise,
 * overflow included (a length past the input leaves the position past it: decode refuses).
 */
class ViewBytesType extends avsc.types.BytesType {
  _read(tap: Tap): Buffer | undefined {
    const length = tap.readLong();
    if (length < 0) return void tap._invalidate();
    const start = tap.pos;
    tap.pos += length;
    return tap.pos > tap.buf.length ? undefined : tap.buf.subarray(start, tap.pos);
  }
}

const VIEW_BYTES = new ViewBytesType();

/** A type of `schema` for decoding only, whose bytes values are views of the input (copy what is kept). */
export function avroViewType(schema: AvroRecordSchema): avsc.Type {
  const typeHook = (s: avsc.Schema): avsc.Type | undefined =>
    s === 'bytes' || (typeof s === 'object' && !Array.isArray(s) && (s as { type?: unknown }).type === 'bytes' && !('logicalType' in s))
      ? VIEW_BYTES
      : exactLongHook(s);
  return avsc.Type.forSchema(structuredClone(schema) as avsc.Schema, { typeHook });
}

/**
 * A union of records (an Avro object container file of events), every long exact. avsc's
 * 'auto' wraps the union of records (`{ "runlog.events.Submitted": {...} }`) and leaves the
 * fields' optional unions (`["null", "bytes"]`) as plain values, as the codec has them.
 */
export function avroUnionType(schemas: readonly unknown[]): avsc.Type {
  return avsc.Type.forSchema(structuredClone(schemas) as avsc.Schema, { typeHook: exactLongHook, wrapUnions: 'auto' });
}

/** Every long, also one written `{"type": "long", "logicalType": ...}`, is the exact long. */
function exactLongHook(schema: avsc.Schema): avsc.Type | undefined {
  const isLong =
    schema === 'long' || (typeof schema === 'object' && !Array.isArray(schema) && (schema as { type?: unknown }).type === 'long');
  return isLong ? EXACT_LONG : undefined;
}

/** avsc's write errors do not say where; its validator does (only run on failure). */
export function describeInvalid(type: avsc.Type, value: unknown, error: unknown): string {
  const problems: string[] = [];
  type.isValid(value, {
    errorHook: (path: string[], bad: unknown, badType: avsc.Type) =>
      problems.push(`${path.join('.') || '(record)'} = ${describe(bad)} is not a valid ${badType.typeName}`),
  });
  return problems.length > 0 ? problems.join('; ') : (error as Error).message;
}
