/**
 * The service's structured log: one JSON line per event worth logging,
 *   {"time":"2026-12-01T05:40:00.000Z","level":"info","event":"serve.listening","url":"http://127.0.0.1:7070"}
 * time (ISO 8601, UTC), level, event (a stable dotted name), then the event's fields. A field
 * named like one of those three is written as `field.<name>` rather than overwrite it.
 * Events below the configured level are dropped. Errors are written as { name, code,
 * message, retriable, cause }, with their stack only when the level is debug. Bigints are
 * written as strings, bytes as their length, a value seen twice on one path as "[Circular]".
 * Logging never throws: a line that cannot be made says so instead.
 */
import { isRunlogError } from '../errors.ts';
import { optionalFunction, optionalOptions, requireOneOf } from '../validation/index.ts';
import type { LogLevel, Logger } from './types.ts';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface JsonLoggerOptions {
  /** The lowest level written (default info). */
  level?: LogLevel;
  /** Where each line goes, newline included (default: process.stdout). */
  write?: (line: string) => void;
  /** The time stamped on each line, epoch ms (default Date.now). */
  clock?: () => number;
}

const RESERVED = new Set(['time', 'level', 'event']);

export function openJsonLogger(options: JsonLoggerOptions = {}): Logger {
  const body = optionalOptions('options', options, ['level', 'write', 'clock']);
  const threshold = LOG_LEVELS.indexOf(requireOneOf('options.level', body.level ?? 'info', LOG_LEVELS));
  const write =
    optionalFunction<(line: string) => void>('options.write', body.write) ?? ((line: string) => void process.stdout.write(line));
  const clock = optionalFunction<() => number>('options.clock', body.clock) ?? Date.now;
  const stacks = threshold === 0;
  return {
    log(level, event, fields = {}) {
      if (LOG_LEVELS.indexOf(level) < threshold) return;
      write(`${line(new Date(clock()).toISOString(), level, event, fields, stacks)}\n`);
    },
  };
}

function line(time: string, level: LogLevel, event: string, fields: Record<string, unknown>, stacks: boolean): string {
  const record: Record<string, unknown> = { time, level, event };
  try {
    for (const [key, value] of Object.entries(fields)) record[RESERVED.has(key) ? `field.${key}` : key] = value;
    return JSON.stringify(record, replacer(stacks));
  } catch (error) {
    return JSON.stringify({ time, level, event, logError: `the fields could not be written: ${String(error)}` });
  }
}

/** JSON.stringify's replacer: errors, bigints, bytes, cycles. `this` is the object holding `value`. */
function replacer(stacks: boolean): (this: unknown, key: string, value: unknown) => unknown {
  // The objects on the path from the root to `value`'s holder, as written (`holders`) and as
  // given (`originals`, where an error was written as its fields): a value among them is a cycle.
  const holders: unknown[] = [];
  const originals: unknown[] = [];
  return function (this: unknown, _key, value) {
    while (holders.length > 0 && holders[holders.length - 1] !== this) {
      holders.pop();
      originals.pop();
    }
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Uint8Array) return { bytes: value.byteLength };
    if (typeof value !== 'object' || value === null) return value;
    if (originals.includes(value)) return '[Circular]';
    const written = value instanceof Error ? errorFields(value, stacks) : value;
    holders.push(written);
    originals.push(value);
    return written;
  };
}

function errorFields(error: Error, stacks: boolean): Record<string, unknown> {
  const fields: Record<string, unknown> = { name: error.name };
  if (isRunlogError(error)) Object.assign(fields, { code: error.code, retriable: error.retriable });
  else if ('code' in error && error.code !== undefined) fields.code = error.code;
  fields.message = error.message;
  if (error.cause !== undefined) fields.cause = error.cause;
  if (stacks && error.stack !== undefined) fields.stack = error.stack;
  return fields;
}
