/**
 * The last check before a command's events are folded and appended: their encoded records
 * must fit the log's limits (EventLog.maxRecordBytes, maxAppendBytes), so that nothing is
 * acknowledged that the log's reader or broker would refuse. Field limits (requests.ts,
 * maxInputBytes) refuse most oversized values first, by name; this catches what only the
 * whole record shows (a result of maxInputBytes together with a long error, say).
 */
import { invalidArgument } from '../errors.ts';
import type { RunlogEvent } from '../events/types.ts';
import { RECORD_OVERHEAD_BYTES, recordBytes, type AppendRecord, type EventLog } from '../log/event-log.ts';

/**
 * Refuses with InvalidArgument, naming the event, its big fields and the limit, unless every
 * record and the append fit; answers the append's size (appendBytes: the snapshot policy counts it).
 */
export function checkRecordsFit(
  log: Pick<EventLog, 'kind' | 'maxRecordBytes' | 'maxAppendBytes'>,
  events: readonly RunlogEvent[],
  records: readonly AppendRecord[],
): number {
  let total = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const bytes = recordBytes(records[i]!);
    total += bytes + RECORD_OVERHEAD_BYTES;
    if (bytes > log.maxRecordBytes) {
      throw invalidArgument(
        `the ${event.type} event of entry ${event.entryId} is ${bytes} bytes encoded${bigFields(event)}, more than the ${log.kind} log's record limit of ${log.maxRecordBytes} bytes`,
      );
    }
  }
  if (total > log.maxAppendBytes) {
    throw invalidArgument(
      `the command writes ${records.length} records of ${total} bytes in one append, more than the ${log.kind} log's append limit of ${log.maxAppendBytes} bytes`,
    );
  }
  return total;
}

/** The sizes of an event's variable-size fields, for the message: " (input 1048576 bytes, metadata 12 bytes)". */
function bigFields(event: RunlogEvent): string {
  const fields: Array<[string, number]> = [];
  switch (event.type) {
    case 'Submitted':
      fields.push(
        ['input', event.input.byteLength],
        ['metadata', Object.entries(event.metadata).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(v), 0)],
      );
      break;
    case 'Closed':
      fields.push(['result', event.result?.byteLength ?? 0], ['error', Buffer.byteLength(event.error ?? '')]);
      break;
    case 'Yielded':
      fields.push(['error', Buffer.byteLength(event.error ?? '')]);
      break;
    case 'CancelRequested':
      fields.push(['reason', Buffer.byteLength(event.reason ?? '')]);
      break;
    default:
      return '';
  }
  return ` (${fields.map(([name, bytes]) => `${name} ${bytes} bytes`).join(', ')})`;
}
