/**
 * How the command line prints. Human output gives times in UTC, ISO 8601 with the zone
 * always written out: `2026-12-01 05:40:12.345 +00:00` in a line's leading column,
 * `2026-12-01T05:40:12.345+00:00` inside `name=value` fields (the same on every machine). --json prints one JSON document, or JSON
 * Lines (one document a line) for streams of events; bytes as base64, times as epoch ms.
 */
import type { Writable } from 'node:stream';

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
  // A stream that failed (a reader that stopped reading: EPIPE) takes nothing more: the write fails as it did.
  if (stream.errored !== null && stream.errored !== undefined) throw stream.errored;
  if (stream.write(text)) return;
  if (!stream.destroyed) await drainedOrClosed(stream);
  else if (stream.errored) throw stream.errored;
}

/**
 * Resolves once `stream` drains or closes, rejects if it errors; every listener it added is
 * removed then (a race of two `once` left the loser's, two listeners per full buffer: an export
 * of 100k events warned MaxListenersExceeded, and a long tail into a slow pipe grew for ever).
 */
function drainedOrClosed(stream: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settled = (): void => {
      stream.off('drain', drained);
      stream.off('close', drained);
      stream.off('error', failed);
    };
    const drained = (): void => {
      settled();
      resolve();
    };
    const failed = (error: unknown): void => {
      settled();
      reject(error);
    };
    stream.on('drain', drained);
    stream.on('close', drained);
    stream.on('error', failed);
  });
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
