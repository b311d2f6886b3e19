/**
 * An entry's trail for people (`runlog history`): the submission, every field of it; the
 * one-line why; then every event, one a line, with its date and zone, its offset and the
 * time since the previous event.
 */
import type { Submitted } from '../events/types.ts';
import { formatDuration } from './durations.ts';
import type { EntryTrail, HistoryItem } from './entry-trail.ts';
import { bytesText } from './entry-text.ts';
import { whyLine } from './entry-why.ts';
import { describeEvent } from './history.ts';
import { formatTime } from './output.ts';

export function trailText(trail: EntryTrail): string {
  const submitted = trail.items.find((item) => item.event.type === 'Submitted')?.event as Submitted | undefined;
  const rows: [string, string | null][] = [
    ['ticket', trail.entryId],
    ['tenant', trail.tenant],
    ['partition', String(trail.partition)],
    ...(submitted === undefined ? [['submission', 'compacted away'] as [string, string]] : submissionRows(submitted)),
    ['why', whyLine(trail.items)],
  ];
  const shown = rows.filter((row): row is [string, string] => row[1] !== null);
  const width = Math.max(...shown.map(([name]) => name.length));
  const block = shown.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
  return `${block}\n\nevents (${trail.items.length}):\n${eventLines(trail.items).join('\n')}`;
}

function submissionRows(s: Submitted): [string, string | null][] {
  return [
    ['thread', s.thread],
    ['agent', s.agent],
    ['submitted', formatTime(s.at)],
    ['input', bytesText(s.input)],
    ['key', s.key ?? '(none)'],
    ['strategy', s.strategy],
    ['priority', String(s.priority)],
    ['not before', s.notBefore === null ? '(none)' : formatTime(s.notBefore)],
    ['deadline', s.deadline === null ? '(none)' : formatTime(s.deadline)],
    ['max attempts', String(s.maxAttempts)],
    ['metadata', metadataText(s.metadata)],
  ];
}

function metadataText(metadata: Record<string, string>): string {
  const pairs = Object.entries(metadata);
  return pairs.length === 0 ? '(none)' : pairs.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ');
}

/** `date time zone  @offset  +since-previous  Type  fields`, the first event's gap shown as `+0 ms`. */
function eventLines(items: readonly HistoryItem[]): string[] {
  const offsetWidth = Math.max(...items.map(({ offset }) => String(offset).length)) + 1;
  const gaps = items.map(({ event }, i) => `+${formatDuration(i === 0 ? 0 : event.at - items[i - 1]!.event.at)}`);
  const gapWidth = Math.max(...gaps.map((gap) => gap.length));
  return items.map(({ offset, event }, i) =>
    `${formatTime(event.at)}  ${`@${offset}`.padEnd(offsetWidth)}  ${gaps[i]!.padStart(gapWidth)}  ${event.type.padEnd(15)} ${describeEvent(event)}`.trimEnd(),
  );
}
