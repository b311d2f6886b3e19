/** Options several commands share, and reading option values (a bad one is a UsageError naming the flag). */
import type { LogConfig } from '../log/event-log.ts';
import { UsageError, type OptionSpecs, type OptionValues } from './command.ts';

/** Where the read-only commands find the log. */
export const LOG_OPTIONS: OptionSpecs = {
  dir: { type: 'string', value: 'DIR', help: 'the file log in DIR (default ./data)' },
  brokers: { type: 'string', value: 'HOST:PORT[,...]', help: 'a Kafka log on these brokers (with --topic)' },
  topic: { type: 'string', value: 'NAME', help: 'the Kafka topic of the log (with --brokers)' },
};

export const JSON_OPTION: OptionSpecs = {
  json: { type: 'boolean', help: 'machine output: JSON (JSON Lines for streams of events), bytes as base64, times as epoch ms' },
};

export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function flag(values: OptionValues, name: string): boolean {
  return values[name] === true;
}

export function listOption(values: OptionValues, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** A non-empty text value. */
export function textOption(values: OptionValues, name: string): string | undefined {
  const value = stringOption(values, name);
  if (value === '') throw new UsageError(`--${name} must not be empty`);
  return value;
}

/** An integer in [min, max], written in decimal digits. */
export function integerOption(values: OptionValues, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const text = stringOption(values, name);
  if (text === undefined) return undefined;
  const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in ${min}..${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** The log --dir or --brokers/--topic name (default: the file log in ./data). */
export function logConfigOf(values: OptionValues): LogConfig {
  const dir = textOption(values, 'dir');
  const brokers = textOption(values, 'brokers');
  const topic = textOption(values, 'topic');
  if (brokers !== undefined || topic !== undefined) {
    if (dir !== undefined) throw new UsageError('--dir names a file log, --brokers/--topic a Kafka log: give one');
    if (brokers === undefined || topic === undefined) throw new UsageError('--brokers and --topic go together');
    const list = brokers.split(',');
    if (list.some((broker) => !/^[^\s:,]+:\d+$/.test(broker)))
      throw new UsageError(`--brokers must be HOST:PORT[,...], got ${JSON.stringify(brokers)}`);
    return { kind: 'kafka', brokers: list, topic };
  }
  return { kind: 'file', dir: dir ?? './data' };
}
