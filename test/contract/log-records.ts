/** Records for EventLog tests: build one from text, read one back as text, drain a read. */
import assert from 'node:assert/strict';
import type { AppendRecord, LogRecord } from '../../src/log/event-log.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

export function rec(key: string, value: string | null): AppendRecord {
  return { key, value: value === null ? null : enc.encode(value) };
}

export function text(record: LogRecord): string | null {
  return record.value === null ? null : dec.decode(record.value);
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

export function assertIncreasing(offsets: readonly bigint[]): void {
  for (let i = 1; i < offsets.length; i++) {
    assert.ok(offsets[i]! > offsets[i - 1]!, `offsets not increasing at ${i}: ${offsets[i - 1]} then ${offsets[i]}`);
  }
}
