/**
 * runlog events as avsc reads and writes them, and back: bytes fields as Buffers going in
 * (toAvroValue), plain objects of the TS shape coming out (compileToEvent).
 */
import type { RunlogEvent } from './types.ts';
import type { AvroRecordSchema } from './schemas.ts';
import { checkText, isOf, type TextField } from './well-formed.ts';

export interface FieldPlan {
  readonly name: string;
  readonly bytes: boolean;
}

export type ToEvent<V = RunlogEvent> = (record: Record<string, unknown>) => V;

export function fieldPlans(schema: AvroRecordSchema): FieldPlan[] {
  return schema.fields.map((f) => ({ name: f.name, bytes: isOf(f.type, 'bytes') }));
}

/** Up to this size V8 keeps a Uint8Array's bytes in its own heap, until its `buffer` is asked for. */
const ON_HEAP_BYTES = 64;

/**
 * avsc wants Buffers for bytes. The event's Uint8Arrays are wrapped, not copied, except
 * small ones: reading `.buffer` would move their bytes off V8's heap into a native backing
 * store, which costs the view that keeps the event's bytes more than they weigh.
 */
export function toAvroValue(
  event: { type: string },
  writer: { bytesFields: readonly string[]; textFields: readonly TextField[] },
): unknown {
  checkText(event.type, event as unknown as Record<string, unknown>, writer.textFields);
  if (writer.bytesFields.length === 0) return event;
  const value: Record<string, unknown> = { ...event };
  for (const name of writer.bytesFields) {
    const bytes = value[name];
    if (bytes instanceof Uint8Array && !Buffer.isBuffer(bytes)) value[name] = asBuffer(bytes);
  }
  return value;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return bytes.length <= ON_HEAP_BYTES ? Buffer.from(bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Compiles the copy of an avsc record into a plain object of the TS shape (`type` first,
 * Buffers viewed as plain Uint8Arrays). Generated as one object literal per event type,
 * which V8 builds far faster than property-by-property assignment on the replay path.
 * Field names are Avro names ([A-Za-z_][A-Za-z0-9_]*), checked again here before use.
 */
export function compileToEvent<V = RunlogEvent>(eventType: string, fields: readonly FieldPlan[]): ToEvent<V> {
  const parts = fields.map(({ name, bytes }) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid Avro field name ${JSON.stringify(name)}`);
    return bytes ? `${name}: view(r.${name})` : `${name}: r.${name}`;
  });
  const body = `return { type: ${JSON.stringify(eventType)}, ${parts.join(', ')} };`;
  return new Function('view', 'r', body).bind(undefined, asPlainBytes) as ToEvent<V>;
}

function asPlainBytes(value: unknown): unknown {
  return value instanceof Uint8Array ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : value;
}
