/**
 * A position in a whole log: the next offset to read of every partition, in partition
 * order, written comma-separated (`12,0,5,7`). The event stream's message ids are
 * positions, so a reader resumes from the id of the last event it got; `0` alone means
 * every partition from 0 (the whole log).
 */
import { invalidArgument } from '../errors.ts';
import { describe } from '../validation/index.ts';

export type Position = bigint[];

const OFFSET = /^(0|[1-9]\d{0,18})$/;

/** Reads `text` as a position of a log of `partitions` partitions; `name` names it in the error. */
export function parsePosition(name: string, text: string, partitions: number): Position {
  const parts = text.split(',');
  if (parts.length === 1 && parts[0] === '0') return Array.from({ length: partitions }, () => 0n);
  if (parts.length !== partitions || !parts.every((part) => OFFSET.test(part))) {
    throw invalidArgument(
      `${name} must be 0 or ${partitions} offsets, one per partition, comma-separated (e.g. ${Array(partitions).fill(0).join(',')}), got ${describe(text)}`,
    );
  }
  return parts.map(BigInt);
}

export function formatPosition(position: readonly bigint[]): string {
  return position.join(',');
}

/** The end of every partition now: reading from there sees only what is appended next. */
export async function endPosition(log: { partitions: number; endOffset(partition: number): Promise<bigint> }): Promise<Position> {
  return Promise.all(Array.from({ length: log.partitions }, (_, p) => log.endOffset(p)));
}
