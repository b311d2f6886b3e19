/**
 * A decoded event as JSON, for people and other languages (the command line's --json, the
 * server's event stream): bytes as standard base64, plus where the record lies in the log
 * (`partition`, `offset`, a JSON number: offsets stay far below 2^53). A TicketKeyCreated
 * carries the partition's ticket key: it is left out (`secret` omitted), as history does.
 */
import type { RunlogEvent } from './types.ts';

export type EventJson = Record<string, unknown> & { type: RunlogEvent['type']; partition: number; offset: number };

/** `event` with bytes as base64 and its place in the log, as a plain JSON-ready object. */
export function eventJson(event: RunlogEvent, partition: number, offset: bigint): EventJson {
  const json: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(event)) {
    if (event.type === 'TicketKeyCreated' && name === 'secret') continue;
    json[name] = value instanceof Uint8Array ? base64(value) : value;
  }
  return { ...json, type: event.type, partition, offset: Number(offset) };
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
