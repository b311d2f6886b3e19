/**
 * How an entry's events read: one line each (the demo's, tail's and export's form), and
 * entryHistory, the trail of a tenant's entry (entry-trail.ts reads it).
 */
import type { RunlogEvent } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { readEntryTrail, type HistoryItem } from './entry-trail.ts';
import { formatTime, formatTimeField } from './output.ts';

export type { HistoryItem } from './entry-trail.ts';

/** The events of `tenant`'s entry `entryId`, in log order (an EntriesPruned naming it included). */
export async function entryHistory(log: EventLog, tenant: string, entryId: string): Promise<HistoryItem[]> {
  return (await readEntryTrail(log, entryId, tenant)).items;
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
