/**
 * The rows of the bad-argument tables (bad-arguments.test.ts, bad-arguments.kafka.test.ts):
 * malformed values with how a message must show them, row builders, and how a row's call
 * is run.
 */
import { isRunlogError, type ErrorCode, type EventLog } from '../../src/index.ts';

export interface Row {
  label: string;
  call: () => unknown;
  /** Each must appear in the message (the argument's name, the bad value described). */
  mentions: readonly string[];
  code?: ErrorCode;
}

export class Foo {
  x = 1;
}

export const TIMER_OVERFLOW = 2 ** 31;

/** A plain object whose `key` getter throws. */
export function throwingGetter(key: string): object {
  return Object.defineProperty({}, key, {
    enumerable: true,
    get: () => {
      throw new Error('getter boom');
    },
  });
}

/** A proxy whose every trap throws. */
export function hostileProxy(): object {
  const fail = (): never => {
    throw new Error('trap boom');
  };
  return new Proxy({}, { get: fail, getPrototypeOf: fail, ownKeys: fail, getOwnPropertyDescriptor: fail, has: fail });
}

/** A revoked Proxy: `instanceof`, Array.isArray and every property read on it throw a TypeError. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** Exotic values where a signal is due: `instanceof AbortSignal` throws on the first two and says true of the last two, which fail at first use. */
export function notSignals(): [unknown, string][] {
  return [
    [revokedProxy(), 'Revoked Proxy'],
    [hostileProxy(), 'Proxy'],
    [new Proxy(new AbortController().signal, {}), 'Proxy AbortSignal'],
    [Object.create(AbortSignal.prototype), 'AbortSignal {}'],
  ];
}

/** Exotic values where an array is due: Array.isArray throws on the first; reading the others runs a throwing trap. */
export function notArrays(): [unknown, string][] {
  const fail = (): never => {
    throw new Error('trap boom');
  };
  return [
    [revokedProxy(), 'Revoked Proxy'],
    [new Proxy(['build'], { get: fail }), 'trap boom'],
    [new Proxy([], { get: fail, getPrototypeOf: fail, ownKeys: fail, getOwnPropertyDescriptor: fail, has: fail }), 'trap boom'],
  ];
}

/** Exotic values where bytes are due: a Proxy is never read as bytes (its traps would answer them). */
export function notBytes(): [unknown, string][] {
  return [
    [revokedProxy(), 'Revoked Proxy'],
    [hostileProxy(), 'Proxy'],
    [new Proxy(new Uint8Array(2), {}), 'Proxy Uint8Array(2)'],
  ];
}

/** Values that are no integer (or out of every range given here), with how the message must show them. */
export const NOT_INTEGERS: [unknown, string][] = [
  [Number.NaN, 'NaN'],
  [Number.POSITIVE_INFINITY, 'Infinity'],
  [Number.NEGATIVE_INFINITY, '-Infinity'],
  [1.5, '1.5'],
  ['5', '"5"'],
  [5n, '5n'],
  [-1, '-1'],
];

export const NOT_NAMES: [unknown, string][] = [
  [42, '42'],
  ['', '""'],
  ['a\u0000b', '"a\\u0000b"'],
  ['lone \ud800 surrogate', '"lone \\ud800 surrogate"'],
  [Symbol('s'), 'Symbol(s)'],
  [{}, '{}'],
  [null, 'null'],
];

/** Objects an options or request argument must not be, each with what the message must name. */
export function notPlainObjects(goodKey: string): [unknown, string][] {
  return [
    [null, 'null'],
    [[], '[]'],
    [new Map([[goodKey, 1]]), 'Map(1)'],
    [new Date(0), 'Date(1970-01-01T00:00:00.000Z)'],
    [new Foo(), 'Foo { x: 1 }'],
    [42, '42'],
    [hostileProxy(), 'Proxy'],
    [throwingGetter(goodKey), `.${goodKey} could not be read`],
  ];
}

export function rows(label: string, name: string, values: [unknown, string][], call: (value: unknown) => unknown, code?: ErrorCode): Row[] {
  return values.map(([value, shown]) => ({
    label: `${label} ${shown}`,
    call: () => call(value),
    mentions: [name, shown],
    ...(code ? { code } : {}),
  }));
}

/** Rows for an object argument: not a plain object, or with a misspelt key. */
export function objectRows(label: string, name: string, goodKey: string, call: (value: unknown) => unknown, misspelt = 'colour'): Row[] {
  return [
    ...rows(label, name, notPlainObjects(goodKey), call),
    { label: `${label} with unknown key`, call: () => call({ [misspelt]: 1 }), mentions: [name, `"${misspelt}"`] },
  ];
}

/**
 * A refusal comes before any I/O, so a call still pending after HANG_MS slipped through
 * (it would wait forever, or is connecting somewhere): reported as such, not waited for.
 * Not a timing assertion: every correct row settles within microseconds.
 */
const HANG_MS = 5_000;
const HUNG = new Error('still pending: the call slipped through and waits');

export async function outcome(call: () => unknown): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<unknown>((resolve) => {
    timer = setTimeout(() => resolve(HUNG), HANG_MS);
  });
  try {
    return await Promise.race([settle(call), hung]);
  } finally {
    clearTimeout(timer);
  }
}

async function settle(call: () => unknown): Promise<unknown> {
  try {
    const value = call();
    if (value !== null && typeof value === 'object' && Symbol.asyncIterator in value) {
      for await (const _ of value as AsyncIterable<unknown>) break;
    } else {
      await value;
    }
    return undefined;
  } catch (error) {
    return error;
  }
}

export async function endOffsets(log: EventLog): Promise<bigint[]> {
  return Promise.all(Array.from({ length: log.partitions }, (_, p) => log.endOffset(p)));
}

export function timersActive(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
}

/** Runs every row; answers a line per row whose call was not refused as it must be. */
export async function failedRows(table: readonly Row[]): Promise<string[]> {
  const failures: string[] = [];
  for (const row of table) {
    const error = await outcome(row.call);
    const code = row.code ?? 'InvalidArgument';
    if (!isRunlogError(error, code)) {
      failures.push(`${row.label}: expected ${code}, got ${error === undefined ? 'no error' : String(error)}`);
      continue;
    }
    const missing = row.mentions.filter((text) => !error.message.includes(text));
    if (missing.length > 0)
      failures.push(
        `${row.label}: the message ${JSON.stringify(error.message)} does not name ${missing.map((m) => JSON.stringify(m)).join(', ')}`,
      );
  }
  return failures;
}

/** Collects uncaught exceptions and unhandled rejections until the test ends (an uncaught one would kill a caller's process). */
export function escapes(t: { after(fn: () => void): void }): unknown[] {
  const escaped: unknown[] = [];
  const onEscape = (error: unknown): void => void escaped.push(error);
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
  t.after(() => {
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
  });
  return escaped;
}

/** Every method of an EventLog, against `log` (its partition 0 and 1 exist, 99 does not). */
export function eventLogRows(log: EventLog): Row[] {
  return [
    ...rows(`${log.kind} append partition`, 'partition', [...NOT_INTEGERS, [99, '99']], (partition) => log.append(partition as never, [])),
    ...rows(`${log.kind} append records`, 'records', [[null, 'null'], [{}, '{}'], ['r', '"r"'], ...notArrays()], (records) =>
      log.append(0, records as never),
    ),
    ...rows(`${log.kind} append record`, 'records[0]', notPlainObjects('key'), (record) => log.append(0, [record] as never)),
    ...rows(
      `${log.kind} append record key`,
      'records[0].key',
      [
        [42, '42'],
        ['', '""'],
        ['k\ud800', '"k\\ud800"'],
      ],
      (key) => log.append(0, [{ key, value: null }] as never),
    ),
    ...rows(
      `${log.kind} append record value`,
      'records[0].value',
      [['bytes', '"bytes"'], [[1], '[ 1 ]'], [undefined, 'undefined'], ...notBytes()],
      (value) => log.append(0, [{ key: 'k', value }] as never),
    ),
    ...objectRows(`${log.kind} append options`, 'append options', 'consumed', (options) => log.append(0, [], options as never)),
    log.commitsConsumedOffsets === true
      ? {
          label: `${log.kind} append consumed offset not a bigint`,
          call: () => log.append(0, [], { consumed: { group: 'g', topic: 't', partition: 0, offset: 1 } } as never),
          mentions: ['consumed.offset', '1'],
        }
      : {
          label: `${log.kind} append consumed (only Kafka commits consumed offsets)`,
          call: () => log.append(0, [], { consumed: { group: 'g', topic: 't', partition: 0, offset: 1n } }),
          mentions: ['consumed', 'only the Kafka log'],
        },
    {
      label: `${log.kind} append record with unknown key`,
      call: () => log.append(0, [{ key: 'k', value: null, offset: 5n }] as never),
      mentions: ['records[0]', '"offset"'],
    },
    ...rows(
      `${log.kind} read offset`,
      'offset',
      [
        [0, '0'],
        [-1n, '-1n'],
        [Number.NaN, 'NaN'],
      ],
      (offset) => log.read(0, offset as never),
    ),
    ...objectRows(`${log.kind} read options`, 'read options', 'maxRecords', (options) => log.read(0, 0n, options as never), 'max'),
    ...rows(`${log.kind} read maxRecords`, 'maxRecords', NOT_INTEGERS, (maxRecords) => log.read(0, 0n, { maxRecords } as never)),
    ...objectRows(`${log.kind} tail options`, 'tail options', 'signal', (options) => log.tail(0, 0n, options as never)),
    ...rows(`${log.kind} tail signal`, 'signal', [[undefined, 'undefined'], [{}, '{}'], ...notSignals()], (signal) =>
      log.tail(0, 0n, { signal } as never),
    ),
    ...rows(
      `${log.kind} endOffset partition`,
      'partition',
      [
        [-1, '-1'],
        ['0', '"0"'],
      ],
      (partition) => log.endOffset(partition as never),
    ),
    ...rows(
      `${log.kind} compact partition`,
      'partition',
      [
        [Number.NaN, 'NaN'],
        [2.5, '2.5'],
      ],
      (partition) => log.compact(partition as never),
    ),
  ];
}
