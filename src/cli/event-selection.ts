/**
 * What tail and export read: which partitions, from where, and which events (the
 * --partition, --from, --tenant, --thread and --entry options they share), and how an
 * event prints.
 */
import { eventJson } from '../events/event-json.ts';
import type { EventFilter } from '../events/event-filter.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { endPosition, parsePosition } from '../log/position.ts';
import { UsageError, type CliIo, type OptionSpecs, type OptionValues } from './command.ts';
import { describeEvent } from './history.ts';
import { flag, integerOption, stringOption, textOption } from './options.ts';
import { formatTime, writeJson, writeLine } from './output.ts';
import type { FollowPlan } from './follow.ts';

export const SELECTION_OPTIONS: OptionSpecs = {
  partition: { type: 'string', value: 'N', help: 'only partition N (default: every partition)' },
  tenant: { type: 'string', value: 'TENANT', help: "only this tenant's events" },
  thread: { type: 'string', value: 'THREAD', help: "only this thread's events" },
  entry: { type: 'string', value: 'ENTRY_ID', help: "only this entry's events" },
};

export function filterOf(values: OptionValues): EventFilter {
  const filter: EventFilter = {};
  for (const name of ['tenant', 'thread', 'entry'] as const) {
    const value = textOption(values, name);
    if (value !== undefined) filter[name] = value;
  }
  return filter;
}

/**
 * Where reading starts: `start` (offset 0), `end` (only what is appended next), or offsets:
 * one with --partition; else `0` or one per partition, comma-separated (an event stream id).
 */
export async function planOf(values: OptionValues, log: EventLog, fallback: 'start' | 'end'): Promise<FollowPlan> {
  const partition = integerOption(values, 'partition', 0, log.partitions - 1);
  const partitions = partition === undefined ? Array.from({ length: log.partitions }, (_, p) => p) : [partition];
  const from = stringOption(values, 'from') ?? fallback;
  if (from === 'start') return { partitions, from: partitions.map(() => 0n) };
  if (from === 'end') {
    const ends = await endPosition(log);
    return { partitions, from: partitions.map((p) => ends[p]!) };
  }
  if (partition !== undefined) {
    if (!/^\d+$/.test(from)) throw new UsageError(`--from must be start, end or an offset, got ${JSON.stringify(from)}`);
    return { partitions, from: [BigInt(from)] };
  }
  return { partitions, from: parsePosition('--from', from, log.partitions) };
}

export function checkFromSyntax(values: OptionValues): void {
  const from = stringOption(values, 'from');
  if (from !== undefined && !/^(start|end|\d+(,\d+)*)$/.test(from))
    throw new UsageError(`--from must be start, end, an offset or one offset per partition (a,b,...), got ${JSON.stringify(from)}`);
}

/** One event: JSON Lines with --json, else a line of time, place, type, tenant/thread, entry and fields. */
export function printEvent(io: CliIo, values: OptionValues, event: RunlogEvent, partition: number, offset: bigint): Promise<void> {
  if (flag(values, 'json')) return writeJson(io.stdout, eventJson(event, partition, offset));
  const about = event.tenant === '' ? '(partition)' : `${event.tenant}/${event.thread} ${event.entryId ?? '-'}`;
  const place = `p${partition}@${offset}`;
  return writeLine(
    io.stdout,
    `${formatTime(event.at)}  ${place.padEnd(8)} ${event.type.padEnd(15)} ${about} ${describeEvent(event)}`.trimEnd(),
  );
}
