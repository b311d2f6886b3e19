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

const NO_KEYS: readonly string[] = Object.freeze([]);
/** No tombstones (most commands): one shared, frozen empty array. */
const NO_RECORDS: AppendRecord[] = Object.freeze([]) as unknown as AppendRecord[];

export function recordsOf(
  view: PartitionView,
  events: RunlogEvent[],
  alsoTombstone: readonly string[] = NO_KEYS,
): { records: AppendRecord[]; tombstones: AppendRecord[] } {
  let tombstones = NO_RECORDS;
  for (const event of events) {
    if (event.type !== 'EntriesPruned') continue;
    if (tombstones === NO_RECORDS) tombstones = [];
    for (const id of event.entryIds) tombstones.push(...tombstonesOf(view, id));
  }
  if (alsoTombstone.length > 0) {
    if (tombstones === NO_RECORDS) tombstones = [];
    for (const key of alsoTombstone) tombstones.push({ key, value: null });
  }
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
