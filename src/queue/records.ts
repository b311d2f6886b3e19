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
  const tombstones = events.flatMap((event) =>
    event.type === 'EntriesPruned' ? event.entryIds.flatMap((id) => tombstonesOf(view, id)) : [],
  );
  for (const key of alsoTombstone) tombstones.push({ key, value: null });
  const records: AppendRecord[] = events.map((event) => ({ key: recordKeyOf(event), value: encodeEvent(event) }));
  records.push(...tombstones);
  return { records, tombstones };
}

function tombstonesOf(view: PartitionView, entryId: string): AppendRecord[] {
  const ticket = view.closedTicket(entryId)!;
  const keys = [submissionKey(entryId), stateKey(entryId)];
  for (let attempt = 1; attempt <= ticket.attempts; attempt++) keys.push(attemptKey(entryId, attempt));
  keys.push(...view.answers.keysOf(entryId));
  return keys.map((key) => ({ key, value: null }));
}
