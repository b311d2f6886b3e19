/**
 * One run's fold: the state, each partition's position (the next offset to fold), and where
 * each partition stops (`until`). A record at or past its partition's position is folded
 * once; one below it (delivered again) is ignored; a partition that reached `until` folds
 * nothing more.
 *
 * `until` by offset stops a partition before that offset; by time, before the first event
 * stamped after it (tombstones carry no time and are folded in their place). A partition's
 * position moves to the end its read reached even where no record was (holes), but never past
 * an `until` offset.
 */
import type { Projection } from '../../projections/projection.ts';
import { anchorOf } from '../log/record-anchor.ts';
import type { CheckpointAnchor } from './checkpoint.ts';
import type { DecodedRecord } from './read-partitions.ts';
import type { Point } from './run-options.ts';
import type { ProjectionResult } from './projection-result.ts';

export class ProjectionFold<S> {
  readonly position: Map<number, bigint>;
  readonly #done = new Set<number>();
  folded = 0;
  /** The latest store-clock time of an event folded (a resumed checkpoint's included). */
  lastAt: number;
  sinceCheckpoint = 0;
  caughtUp = false;
  /** Each partition's last record folded (its anchor made at a checkpoint, not for every record). */
  readonly #last = new Map<number, DecodedRecord>();
  /** The anchors of the checkpoint resumed, for partitions that have folded nothing since. */
  readonly #resumedAnchors: ReadonlyMap<number, CheckpointAnchor>;

  constructor(
    private readonly projection: Projection<S>,
    public state: S,
    position: ReadonlyMap<number, bigint>,
    private readonly until: Point | null,
    readonly resumed: boolean,
    lastAt: number,
    resumedAnchors: ReadonlyMap<number, CheckpointAnchor> = new Map(),
  ) {
    this.position = new Map(position);
    this.lastAt = lastAt;
    this.#resumedAnchors = resumedAnchors;
    if (until?.kind === 'offsets') for (const [p, at] of this.position) if (at >= until.offsets.get(p)!) this.#done.add(p);
  }

  readonly isDone = (partition: number): boolean => this.#done.has(partition);

  allDone(): boolean {
    return this.#done.size === this.position.size;
  }

  apply(record: DecodedRecord): void {
    const { partition, offset, event } = record;
    if (this.#done.has(partition) || offset < this.position.get(partition)!) return;
    if (this.#stopsAt(record)) {
      this.#done.add(partition);
      if (this.until?.kind === 'offsets') this.position.set(partition, this.until.offsets.get(partition)!);
      else this.position.set(partition, offset);
      return;
    }
    const position = { partition, offset, key: record.key };
    const { projection } = this;
    if (event === null) {
      if (projection.tombstone !== null) this.state = projection.tombstone(this.state, record.key, position);
    } else {
      if (projection.handles === null || projection.handles.has(event.type)) this.state = projection.evolve(this.state, event, position);
      if (event.at > this.lastAt) this.lastAt = event.at;
    }
    this.position.set(partition, offset + 1n);
    this.#last.set(partition, record);
    this.folded++;
    this.sinceCheckpoint++;
  }

  /** Each partition's last record folded, as a checkpoint keeps it (start-position.ts checks it on resuming). */
  anchors(): Map<number, CheckpointAnchor> {
    const anchors = new Map(this.#resumedAnchors);
    for (const [partition, { offset, key, value }] of this.#last) anchors.set(partition, { offset, anchor: anchorOf(key, value) });
    return anchors;
  }

  /** The partition was read up to `end` (taken before its read): nothing below it is left to fold. */
  reachedEnd(partition: number, end: bigint): void {
    if (this.#done.has(partition)) return;
    const limit = this.until?.kind === 'offsets' ? this.until.offsets.get(partition)! : null;
    const reached = limit !== null && end >= limit ? limit : end;
    if (reached > this.position.get(partition)!) this.position.set(partition, reached);
    if (limit !== null && reached === limit) this.#done.add(partition);
  }

  #stopsAt({ partition, offset, event }: DecodedRecord): boolean {
    if (this.until === null) return false;
    if (this.until.kind === 'offsets') return offset >= this.until.offsets.get(partition)!;
    return event !== null && event.at > this.until.at;
  }

  result(): ProjectionResult<S> {
    return { state: this.state, position: new Map(this.position), folded: this.folded, resumed: this.resumed, caughtUp: this.caughtUp };
  }
}
