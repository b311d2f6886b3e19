/**
 * The audit trail of one entry, read from the log: every event about it, in log order,
 * decoded and formatted one line each. Reads the entry's partition from the start, so it
 * is a tool for people and demos, not a hot path.
 */
import { decodeEvent } from '../events/codec.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { parseEntryId } from '../queue/entry-id.ts';
import { RunlogError } from '../errors.ts';
import { describe } from '../validation/index.ts';
import { formatTime, formatTimeField } from './output.ts';

export interface HistoryItem {
  partition: number;
  offset: bigint;
  event: RunlogEvent;
}

/** The events of `tenant`'s entry `entryId`, in log order (an EntriesPruned naming it included). */
export async function entryHistory(log: EventLog, tenant: string, entryId: string): Promise<HistoryItem[]> {
  const parsed = parseEntryId(entryId, log.partitions);
  if (parsed === null) throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
  const items: HistoryItem[] = [];
  for await (const record of log.read(parsed.partition, 0n)) {
    if (record.value === null) continue;
    const event = decodeEvent(record.value);
    if (isAbout(event, tenant, entryId)) items.push({ partition: parsed.partition, offset: record.offset, event });
  }
  return items;
}

function isAbout(event: RunlogEvent, tenant: string, entryId: string): boolean {
  if (event.type === 'EntriesPruned') return event.entryIds.includes(entryId);
  return event.entryId === entryId && event.tenant === tenant;
}

/** One readable line: store-clock time (output.ts), offset, event type, then what the event says. */
export function formatHistoryItem({ offset, event }: HistoryItem): string {
  return `${formatTime(event.at)}  @${String(offset).padEnd(4)} ${event.type.padEnd(15)} ${describeEvent(event)}`.trimEnd();
}

export function describeEvent(event: RunlogEvent): string {
  switch (event.type) {
    case 'Submitted':
      return fields({ agent: event.agent, input: text(event.input), key: event.key, priority: event.priority || null });
    case 'Leased':
    case 'LeaseExtended':
      return fields({
        holder: event.holder,
        epoch: event.epoch,
        expiresAt: clock(event.expiresAt),
        deferred: event.deferredAttempts || null,
      });
    case 'AttemptStarted':
      return fields({ runId: event.runId, attempt: event.attempt, epoch: event.epoch });
    case 'Yielded':
      return fields({
        kind: event.kind,
        epoch: event.epoch,
        error: quoted(event.error),
        notBefore: event.notBefore === null ? null : clock(event.notBefore),
        deferred: event.deferredAttempts || null,
      });
    case 'CancelRequested':
      return fields({ reason: quoted(event.reason) });
    case 'Closed':
      return fields({ outcome: event.outcome, result: event.result === null ? null : text(event.result), error: quoted(event.error) });
    case 'ThreadDeleted':
      return '';
    case 'EntriesPruned':
      return fields({ pruned: event.entryIds.length });
    case 'TicketKeyCreated':
      return fields({ legacyThrough: event.legacyThrough }); // never the secret itself
    case 'CommandAnswered':
      return fields({
        command: event.command,
        request: JSON.stringify(event.requestId),
        entry: event.entryId,
        created: event.created ? 'true' : null,
        refused: event.code,
        message: quoted(event.message),
      });
  }
}

function fields(values: Record<string, string | number | null>): string {
  return Object.entries(values)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}

function quoted(value: string | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

function clock(at: number): string {
  return formatTimeField(at);
}

/** Bytes as JSON-quoted text when short UTF-8, else their length. */
function text(bytes: Uint8Array): string {
  const decoded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return decoded.length <= 40 && !decoded.includes('\uFFFD') ? JSON.stringify(decoded) : `<${bytes.byteLength} bytes>`;
}
