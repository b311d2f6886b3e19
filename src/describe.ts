/**
 * The one describer of bad values in runlog's error messages. It never throws and never
 * runs the caller's code: getters are shown, not called; proxies are shown by their
 * target, not through their traps; toJSON and custom inspectors are not called.
 * NaN, Infinity, -0, bigints, symbols, functions, Maps, Dates and class instances read as
 * what they are (JSON.stringify would call them null or {}). The description is well-formed
 * text of at most MAX_CHARS UTF-16 units.
 */
import { inspect, types } from 'node:util';
import { clipText, toWellFormed } from './clip-text.ts';

const MAX_CHARS = 120;
const MAX_STRING_CHARS = 80;

export function describe(value: unknown): string {
  try {
    // Well-formed, so a description can go into text the log stores (an entry's error).
    return toWellFormed(clipText(describeValue(value), MAX_CHARS));
  } catch {
    return `a value of type ${typeof value} that cannot be shown`;
  }
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  if (types.isProxy(value)) return `Proxy ${inspect(value, INSPECT_OPTIONS)}`;
  if (types.isUint8Array(value)) return `Uint8Array(${value.byteLength} bytes)`;
  if (types.isDate(value)) return `Date(${inspect(value, INSPECT_OPTIONS)})`;
  if (types.isNativeError(value)) return firstLine(inspect(value, INSPECT_OPTIONS));
  return inspect(value, INSPECT_OPTIONS);
}

const INSPECT_OPTIONS = {
  depth: 1,
  breakLength: Infinity,
  compact: true,
  maxArrayLength: 5,
  maxStringLength: MAX_STRING_CHARS,
  getters: false,
  showProxy: false,
  customInspect: false,
} as const;

function quoted(text: string): string {
  return JSON.stringify(clipText(text, MAX_STRING_CHARS + 1));
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]!;
}
