/** Replay: read a partition from an offset, decode, and fold into a view. */
import { decodeEvent, eventFoldDecoder } from '../events/codec.ts';
import { isFoldSlab, releaseSlabSource } from '../events/fold-slabs.ts';
import { batchesOf, type BatchedRecords, type EventLog } from '../log/event-log.ts';
import { checkEventLog, checkPartition } from '../log/log-arguments.ts';
import { FOLD_UNREAD, PartitionView } from '../../projections/partition-view.ts';

/** decodeEventAt for the fold: the events it keeps nothing of are read into reused objects, minus the fields it never reads. */
const decodeForFold = eventFoldDecoder(FOLD_UNREAD);

/**
 * Folds every record of `partition` from `view.nextOffset` to the log's end into `view`. Where
 * the log offers it (the file log), each record is decoded where it lies in the read buffer:
 * no record object, offset bigint, key string (but a tombstone's) or value view per record, and
 * the events the fold keeps nothing of (FOLD_UNREAD) are read into one reused object per type.
 * Heads are indexed once at the end (PartitionView.deferHeads), not as each record changes them,
 * and the inputs the open entries keep are moved out of the decoder's slabs then.
 */
export async function catchUp(log: EventLog, partition: number, view: PartitionView): Promise<number> {
  view.deferHeads();
  try {
    return await foldRecords(log, partition, view);
  } finally {
    view.indexHeads();
    moveInputsOutOfSlabs(view);
  }
}

/**
 * The inputs the view's open entries hold in the decoder's slabs (src/events/fold-slabs.ts),
 * each copied into an array of its own, as the decoder gave them before it had slabs: a slab
 * would otherwise stay alive, and every closed input in it, for as long as one of its entries
 * stays open (and a buffer shared by the open ones, once most of them closed, would keep 64 KiB
 * alive for each of the few left).
 */
function moveInputsOutOfSlabs(view: PartitionView): void {
  for (const entry of view.entries.values()) {
    const buffer = entry.inputBuffer; // null: a small input, on V8's heap (never in a slab)
    if (buffer !== null && isFoldSlab(buffer)) entry.moveInput(entry.input.slice());
  }
  releaseSlabSource();
}

async function foldRecords(log: EventLog, partition: number, view: PartitionView): Promise<number> {
  const records = log.read(partition, view.nextOffset);
  const visit = (records as Partial<BatchedRecords>).visit;
  if (typeof visit === 'function') {
    return visit.call(records, (offset, buf, keyStart, valueStart, valueEnd) => {
      if (valueEnd < 0) view.applyAt(offset, buf.toString('utf8', keyStart, valueStart), null);
      else view.applyAt(offset, '', decodeForFold(buf, valueStart, valueEnd));
    });
  }
  let folded = 0;
  for await (const batch of batchesOf(records)) {
    for (const record of batch) view.apply(record.offset, record.key, record.value === null ? null : decodeEvent(record.value));
    folded += batch.length;
  }
  return folded;
}

/** A fresh view of `partition`, rebuilt from the whole log. */
export async function replayPartition(log: EventLog, partition: number): Promise<PartitionView> {
  checkPartition(partition, checkEventLog(log).partitions);
  const view = new PartitionView(partition);
  await catchUp(log, partition, view);
  return view;
}
