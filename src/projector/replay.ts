/** Replay: read a partition from an offset, decode, and fold into a view. */
import { decodeEvent } from '../events/codec.ts';
import { batchesOf, type EventLog } from '../log/event-log.ts';
import { checkEventLog, checkPartition } from '../log/log-arguments.ts';
import { PartitionView } from '../../projections/partition-view.ts';

/** Folds every record of `partition` from `view.nextOffset` to the log's end into `view`. */
export async function catchUp(log: EventLog, partition: number, view: PartitionView): Promise<number> {
  let folded = 0;
  for await (const batch of batchesOf(log.read(partition, view.nextOffset))) {
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
