/**
 * Runs a projection over a log: reads the partitions it asks for from its start (its
 * checkpoint, or `from`), decodes each record through the codec and folds it, up to each
 * partition's end as the run began (or `until`); then, when asked to follow, folds records
 * as they are appended until the signal aborts or every partition reached `until`.
 *
 * Checkpoints (when a store is given) hold the state and the position together, saved every
 * `checkpointEvery` records at a batch's end, once caught up when following, and when the run ends, so a run stopped at any
 * point resumes where its last checkpoint was and folds every record exactly once into the
 * state it resumes. A run whose fold or read throws saves nothing more: its last checkpoint
 * stays the one to resume.
 *
 * Following, records are folded as they arrive: each partition in offset order, partitions
 * interleaved (with order 'time' too: the merge by time covers what was there when the run began).
 */
import { eventOfRecord } from '../events/record-event.ts';
import type { EventLog } from '../log/event-log.ts';
import { checkEventLog } from '../log/log-arguments.ts';
import { tailAll } from '../log/tail-all.ts';
import { checkProjection, type Projection } from '../../projections/projection.ts';
import { encodeCheckpoint, stateBytes } from './checkpoint.ts';
import { ProjectionFold } from './projection-fold.ts';
import type { ProjectionResult } from './projection-result.ts';
import { readByPartition, readByTime } from './read-partitions.ts';
import { checkRunOptions, type CheckedRunOptions, type RunOptions } from './run-options.ts';
import { checkUntilAfterFrom, startOf } from './start-position.ts';

export async function runProjection<S>(log: EventLog, projection: Projection<S>, options?: RunOptions<S>): Promise<ProjectionResult<S>> {
  checkEventLog(log);
  checkProjection(projection);
  const checked = checkRunOptions<S>(options, log.partitions);
  checkUntilAfterFrom(checked);
  const start = await startOf(log, projection, checked);
  const fold = new ProjectionFold(projection, start.state, start.position, checked.until, start.resumed, start.lastAt, start.anchors);
  const run = new Run(log, projection, checked, fold);
  await run.catchUp();
  if (checked.follow !== null) await run.follow(checked.follow);
  await run.checkpoint();
  return fold.result();
}

class Run<S> {
  constructor(
    private readonly log: EventLog,
    private readonly projection: Projection<S>,
    private readonly options: CheckedRunOptions<S>,
    private readonly fold: ProjectionFold<S>,
  ) {}

  /** Reads every partition up to its end as the read began (or `until`), in the order asked for. */
  async catchUp(): Promise<void> {
    const { fold, options } = this;
    const read = options.order === 'time' ? readByTime : readByPartition;
    const plan = { partitions: options.partitions, position: fold.position, isDone: fold.isDone };
    for await (const item of read(this.log, plan, options.follow)) {
      if (item.kind === 'end') fold.reachedEnd(item.partition, item.end);
      else for (const record of item.records) fold.apply(record);
      await this.#afterBatch();
    }
    if (options.follow?.aborted === true) return;
    fold.caughtUp = true;
    if (options.follow === null) return;
    // Caught up, about to wait for new records: keep what was folded, and say so.
    if (fold.sinceCheckpoint > 0) await this.checkpoint();
    options.onUpdate?.(fold.result());
  }

  /** Folds the partitions' new records as they are appended, until `signal` aborts or every partition reached `until`. */
  async follow(signal: AbortSignal): Promise<void> {
    const { fold } = this;
    if (fold.allDone() || signal.aborted) return;
    const partitions = this.options.partitions.filter((p) => !fold.isDone(p));
    const stop = new AbortController();
    const abort = (): void => stop.abort();
    signal.addEventListener('abort', abort, { once: true });
    try {
      const from = partitions.map((p) => fold.position.get(p)!);
      for await (const { partition, record } of tailAll(this.log, partitions, from, stop.signal)) {
        const event = record.value === null ? null : eventOfRecord(record.value, partition, record.offset);
        fold.apply({ partition, offset: record.offset, key: record.key, value: record.value, event });
        await this.#afterBatch();
        if (fold.allDone()) stop.abort();
      }
    } finally {
      signal.removeEventListener('abort', abort);
    }
  }

  async checkpoint(): Promise<void> {
    const { checkpoints } = this.options;
    if (checkpoints === null) return;
    const { fold, projection, options } = this;
    const bytes = encodeCheckpoint({
      name: projection.name,
      version: projection.version,
      logId: checkpoints.logId,
      order: options.order,
      partitions: options.partitions,
      position: fold.position,
      lastAt: fold.lastAt,
      anchors: fold.anchors(),
      state: stateBytes(projection, fold.state),
    });
    await checkpoints.save(projection.name, bytes);
    fold.sinceCheckpoint = 0;
  }

  async #afterBatch(): Promise<void> {
    if (this.fold.sinceCheckpoint >= this.options.checkpointEvery) await this.checkpoint();
    this.options.onUpdate?.(this.fold.result());
  }
}
