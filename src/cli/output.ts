/**
 * How the command line prints. Human output gives times in UTC, ISO 8601 with the zone
 * always written out: `2026-12-01 05:40:12.345 +00:00` in a line's leading column,
 * `2026-12-01T05:40:12.345+00:00` inside `name=value` fields (the same on every machine). --json prints one JSON document, or JSON
 * Lines (one document a line) for streams of events; bytes as base64, times as epoch ms.
 */
import type { Writable } from 'node:stream';
import { once } from 'node:events';

/** Epoch ms as `YYYY-MM-DD hh:mm:ss.mmm +00:00` (a line's leading column). */
export function formatTime(at: number): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} +00:00`;
}

/** Epoch ms as `YYYY-MM-DDThh:mm:ss.mmm+00:00`: the same instant without spaces, for `name=value` fields. */
export function formatTimeField(at: number): string {
  return `${new Date(at).toISOString().slice(0, 23)}+00:00`;
}

/** Writes `text`, waiting while the stream's buffer is full (an export to a slow pipe holds no more than it must). */
export async function write(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await Promise.race([once(stream, 'drain'), once(stream, 'close')]);
}

export function writeLine(stream: Writable, line: string): Promise<void> {
  return write(stream, `${line}\n`);
}

/** One JSON document on its own line: bytes as base64, bigints (offsets) as numbers. */
export function writeJson(stream: Writable, value: unknown): Promise<void> {
  return writeLine(stream, toJsonText(value));
}

/** `value` as --json prints it (bytes as base64, bigints as numbers), on one line. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value, jsonReplacer);
}

function jsonReplacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key]; // before a Buffer's toJSON
  if (original instanceof Uint8Array) return Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64');
  return typeof value === 'bigint' ? Number(value) : value;
}
