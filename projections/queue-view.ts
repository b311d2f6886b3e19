/**
 * The queue's own view of a partition as a projection: the same PartitionView the RunQueue
 * folds live and replays (partition-view.ts), built by the projector. With `until` it is the
 * queue as it was then. It is not checkpointed by the projector (a view is not plain data;
 * the queue's snapshots keep it): a run with checkpoints is refused when it saves one.
 */
import { invalidArgument } from '../src/errors.ts';
import { requireInteger } from '../src/validation/index.ts';
import { PartitionView } from './partition-view.ts';
import { defineProjection, type Projection, type RecordPosition } from './projection.ts';

export function queueViewProjection(partition: number): Projection<PartitionView> {
  requireInteger('partition', partition, 0);
  const check = (position: RecordPosition): bigint => {
    if (position.partition !== partition) {
      throw invalidArgument(`queueViewProjection(${partition}) folds partition ${partition} only: run it with partitions: [${partition}]`);
    }
    return position.offset;
  };
  const notPlainData = (): never => {
    throw invalidArgument(`the queue view is not checkpointed by the projector: run queueViewProjection without checkpoints`);
  };
  return defineProjection<PartitionView>({
    name: `queue-view-${partition}`,
    initial: () => new PartitionView(partition),
    evolve: (view, event, position) => (view.apply(check(position), position.key, event), view),
    tombstone: (view, key, position) => (view.apply(check(position), key, null), view),
    stateCodec: { encode: notPlainData, decode: notPlainData },
  });
}
