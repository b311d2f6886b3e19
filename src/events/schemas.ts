/**
 * The event schemas as files: `schemas/<EventType>.v<N>.avsc`, one Avro record per event
 * type and version, namespace `runlog.events`; and the commands of the commands topic,
 * `schemas/commands/<CommandType>.v<N>.avsc`, namespace `runlog.commands`. A released version
 * is never edited; a new one is added beside it (same record name, so Avro resolution
 * matches them up). This module only reads and checks the files; codec.ts turns them into
 * avsc types.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { EVENT_TYPES, type EventType } from './types.ts';
import { COMMAND_TYPES, type CommandType } from './command-types.ts';
import { parsingCanonicalForm } from './canonical-form.ts';
import { rabinFingerprintOf } from './rabin.ts';

export const SCHEMA_NAMESPACE = 'runlog.events';

/** Where the released schemas live: the repository's `schemas/`, and the build's copy in `dist/schemas/` (scripts/build.mjs). */
export const SCHEMA_DIR: URL = new URL('../../schemas/', import.meta.url);

/** A directory of schemas of one namespace, each a record named by one of `names`. */
export interface SchemaFamily<Name extends string> {
  readonly namespace: string;
  readonly names: readonly Name[];
  readonly dir: URL;
}

export const EVENT_SCHEMAS: SchemaFamily<EventType> = { namespace: SCHEMA_NAMESPACE, names: EVENT_TYPES, dir: SCHEMA_DIR };
export const COMMAND_SCHEMAS: SchemaFamily<CommandType> = {
  namespace: 'runlog.commands',
  names: COMMAND_TYPES,
  dir: new URL('commands/', SCHEMA_DIR),
};

export interface AvroField {
  readonly name: string;
  readonly type: unknown;
  readonly doc?: string;
  readonly default?: unknown;
}

export interface AvroRecordSchema {
  readonly type: 'record';
  readonly name: string;
  readonly namespace: string;
  readonly doc?: string;
  readonly fields: readonly AvroField[];
}

export interface SchemaVersion<Name extends string = EventType> {
  /** The record's name: an event type (or a command type, for a command schema). */
  readonly eventType: Name;
  readonly version: number;
  /** File name, e.g. `Submitted.v1.avsc`. */
  readonly file: string;
  /** The parsed schema, deep-frozen. */
  readonly schema: AvroRecordSchema;
  readonly canonicalForm: string;
  /** CRC-64-AVRO of the canonical form, unsigned. */
  readonly fingerprint: bigint;
}

const FILE_NAME = /^([A-Za-z]+)\.v(\d+)\.avsc$/;

/** Every `<EventType>.v<N>.avsc` in `dir`, sorted by event type then version. */
export function loadSchemaDir(dir: URL = SCHEMA_DIR): SchemaVersion[] {
  return loadSchemaFamily(EVENT_SCHEMAS, dir);
}

/** Every `<Name>.v<N>.avsc` of a family in `dir` (subdirectories are other families), sorted by name then version. */
export function loadSchemaFamily<Name extends string>(family: SchemaFamily<Name>, dir: URL = family.dir): SchemaVersion<Name>[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.avsc'))
    .map((file) => schemaVersion(file, JSON.parse(readFileSync(new URL(file, dir), 'utf8')), family))
    .sort((a, b) => a.eventType.localeCompare(b.eventType) || a.version - b.version);
}

/** Checks one schema file's name and content against the conventions above. */
export function schemaVersion<Name extends string = EventType>(
  file: string,
  json: unknown,
  family: SchemaFamily<Name> = EVENT_SCHEMAS as unknown as SchemaFamily<Name>,
): SchemaVersion<Name> {
  const match = FILE_NAME.exec(file);
  const eventType = family.names.find((t) => t === match?.[1]);
  if (!match || !eventType) throw new Error(`schema file ${file}: expected <Type>.v<N>.avsc with a known type of ${family.namespace}`);
  const schema = checkRecord(file, json, eventType, family.namespace);
  const canonicalForm = parsingCanonicalForm(schema);
  return { eventType, version: Number(match[2]), file, schema, canonicalForm, fingerprint: rabinFingerprintOf(canonicalForm) };
}

function checkRecord(file: string, json: unknown, name: string, namespace: string): AvroRecordSchema {
  const s = json as Partial<AvroRecordSchema> | null;
  if (s?.type !== 'record' || s.name !== name || s.namespace !== namespace || !Array.isArray(s.fields)) {
    throw new Error(`schema file ${file}: expected a record named ${name} in namespace ${namespace}`);
  }
  return deepFreeze(s as AvroRecordSchema);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
