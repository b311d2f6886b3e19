/**
 * The codec of the commands topic's records (command-types.ts, schemas/commands/): Avro
 * single-object encoding exactly as events (codec.ts), with the command schemas' fingerprints.
 * A producer in another language writes them with its own Avro library (Java's
 * BinaryMessageEncoder) from the same schema files.
 */
import type avsc from 'avsc';
import { createCodec, SINGLE_OBJECT_MARKER } from './codec.ts';
import { COMMAND_SCHEMAS, loadSchemaFamily, type AvroRecordSchema, type SchemaVersion } from './schemas.ts';
import type { CommandType, RunlogCommand } from './command-types.ts';
import { avroType } from './avro-types.ts';

/** The released command schemas, read from schemas/commands/ once, at module load. */
export const RELEASED_COMMAND_SCHEMAS: readonly SchemaVersion<CommandType>[] = loadSchemaFamily(COMMAND_SCHEMAS);
const codec = createCodec<RunlogCommand>(RELEASED_COMMAND_SCHEMAS, { noun: 'command', decoderName: 'decodeCommand' });
const typeOf = new Map(RELEASED_COMMAND_SCHEMAS.map((s) => [s.fingerprint, s.eventType]));

export function encodeCommand(command: RunlogCommand): Uint8Array {
  return codec.encode(command);
}

/** A command record's value; Corrupt (naming why) if it is not one of the released command schemas' records. */
export function decodeCommand(bytes: Uint8Array): RunlogCommand {
  return codec.decode(bytes);
}

export function commandSchemaFor(type: CommandType): AvroRecordSchema {
  return codec.schemaFor(type);
}

export function commandSchemaFingerprint(type: CommandType): bigint {
  return codec.fingerprintOf(type);
}

/** Who a command is from, as far as a record that does not decode whole still says. */
export interface CommandIds {
  /** The command schema its header names. */
  type: CommandType;
  requestId: string;
  tenant: string;
  thread: string;
}

/** Every command schema opens with these three strings: they are read even when the rest of the record is damaged. */
const IDS_TYPE: avsc.Type = avroType({
  type: 'record',
  name: 'CommandIds',
  namespace: 'runlog.commands',
  fields: ['requestId', 'tenant', 'thread'].map((name) => ({ name, type: 'string' })),
});

/**
 * The request id, tenant and thread of a command record that `decodeCommand` refuses, if its
 * header names a command schema and its body starts with three strings; else null. So a
 * damaged command can still be answered (refused) under its request id.
 */
export function peekCommandIds(bytes: Uint8Array): CommandIds | null {
  if (bytes.length < 10 || bytes[0] !== SINGLE_OBJECT_MARKER[0] || bytes[1] !== SINGLE_OBJECT_MARKER[1]) return null;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = typeOf.get(buf.readBigUInt64LE(2));
  if (type === undefined) return null;
  try {
    const { value, offset } = IDS_TYPE.decode(buf, 10) as { value: Omit<CommandIds, 'type'> | undefined; offset: number };
    if (value === undefined || offset < 0 || offset > buf.length) return null;
    return { type, requestId: value.requestId, tenant: value.tenant, thread: value.thread };
  } catch {
    return null;
  }
}
