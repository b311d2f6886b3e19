/**
 * Events as an Avro object container file (`runlog export --format avro`): the standard
 * file any Avro tool reads (magic `Obj\x01`, the writer schema in the header, deflate
 * blocks). Its schema is the union of the newest schema of every event type (schemas/),
 * so each value is one event, branch named by its record (`runlog.events.Submitted`).
 * Events are written whole, as the log holds them (a TicketKeyCreated's ticket key too:
 * the file is a copy of the log, as sensitive as the log itself).
 */
import avsc from 'avsc';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { RELEASED_SCHEMAS } from './codec.ts';
import { avroUnionType } from './avro-types.ts';
import { compileToEvent, fieldPlans, toAvroValue, type ToEvent } from './event-values.ts';
import { EVENT_TYPES, type EventType, type RunlogEvent } from './types.ts';
import type { AvroRecordSchema } from './schemas.ts';
import { isOf, textFields, type TextField } from './well-formed.ts';

interface Branch {
  readonly name: string;
  readonly bytesFields: readonly string[];
  readonly textFields: readonly TextField[];
  readonly toEvent: ToEvent;
}

/** The newest schema of each event type, in EVENT_TYPES order. */
function newestSchemas(): AvroRecordSchema[] {
  return EVENT_TYPES.map((type) => RELEASED_SCHEMAS.filter((v) => v.eventType === type).at(-1)!.schema);
}

function branches(): Map<EventType, Branch> {
  return new Map(
    newestSchemas().map((schema, i) => {
      const type = EVENT_TYPES[i]!;
      const name = `${schema.namespace}.${schema.name}`;
      const bytesFields = schema.fields.filter((f) => isOf(f.type, 'bytes')).map((f) => f.name);
      return [type, { name, bytesFields, textFields: textFields(schema.fields), toEvent: compileToEvent(type, fieldPlans(schema)) }];
    }),
  );
}

export interface EventContainerWriter {
  write(event: RunlogEvent): Promise<void>;
  /** Writes the last block and closes the file. */
  close(): Promise<void>;
}

/** Creates the file at `path` (refused if it exists) and writes events into it. */
export async function createEventContainer(path: string): Promise<EventContainerWriter> {
  const file = createWriteStream(path, { flags: 'wx' });
  await once(file, 'open');
  const encoder = new avsc.streams.BlockEncoder(avroUnionType(newestSchemas()), { codec: 'deflate' });
  // A value avsc refuses, or a failing disk: the next write or the close throws it.
  let failure: unknown;
  encoder.on('error', (error) => (failure ??= error));
  file.on('error', (error) => (failure ??= error));
  encoder.pipe(file);
  const byType = branches();
  return {
    async write(event) {
      if (failure !== undefined) throw failure;
      const branch = byType.get(event.type)!;
      if (!encoder.write({ [branch.name]: toAvroValue(event, branch) })) await once(encoder as Writable, 'drain');
    },
    async close() {
      encoder.end();
      if (failure === undefined) await finished(file);
      if (failure !== undefined) throw failure;
    },
  };
}

/** The events of a container file this module wrote, in order. */
export async function* readEventContainer(path: string): AsyncGenerator<RunlogEvent> {
  const byName = new Map([...branches().values()].map((branch) => [branch.name, branch]));
  const decoder = createReadStream(path).pipe(new avsc.streams.BlockDecoder({ parseHook: (schema) => avroUnionType(schema as unknown[]) }));
  for await (const value of decoder as AsyncIterable<Record<string, Record<string, unknown>>>) {
    const [name, record] = Object.entries(value)[0]!;
    yield byName.get(name)!.toEvent(record);
  }
}
