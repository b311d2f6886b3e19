/**
 * The records a commit appends: each event encoded under its record key (events/keys.ts),
 * then a tombstone for every record of each entry an EntriesPruned event removes (its
 * answers' included) and for each key in `alsoTombstone` (loose answers pruned), in the
 * same append (compaction then drops those records). Taken from the view before the events
 * are folded: the pruned entries are still in it.
 */
import { encodeEvent } from '../events/codec.ts';
import { attemptKey, recordKeyOf, stateKey, submissionKey } from '../events/keys.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { AppendRecord } from '../log/event-log.ts';
import type { PartitionView } from '../../projections/partition-view.ts';

export function recordsOf(
  view: PartitionView,
  events: RunlogEvent[],
  alsoTombstone: readonly string[] = [],
): { records: AppendRecord[]; tombstones: AppendRecord[] } {
  const tombstones: AppendRecord[] = [];
  for (const event of events) {
    if (event.type === 'EntriesPruned') for (const id of event.entryIds) tombstones.push(...tombstonesOf(view, id));
  }
  for (const key of alsoTombstone) tombstones.push({ key, value: null });
  const records: AppendRecord[] = new Array(events.length + tombstones.length);
  for (let i = 0; i < events.length; i++) records[i] = { key: recordKeyOf(events[i]!), value: encodeEvent(events[i]!) };
  for (let i = 0; i < tombstones.length; i++) records[events.length + i] = tombstones[i]!;
  return { records, tombstones };
}

function tombstonesOf(view: PartitionView, entryId: string): AppendRecord[] {
  const ticket = view.closedTicket(entryId)!;
  const keys = [submissionKey(entryId), stateKey(entryId)];
  for (let attempt = 1; attempt <= ticket.attempts; attempt++) keys.push(attemptKey(entryId, attempt));
  keys.push(...view.answers.keysOf(entryId));
  return keys.map((key) => ({ key, value: null }));
}
