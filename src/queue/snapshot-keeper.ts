/**
 * When a partition's view is snapshotted (src/projector/snapshots.ts takes and reads them):
 *   - once at least `everyRecords` records AND at least as many bytes as the latest snapshot's
 *     size have been appended since it (the bytes the log's limits count: each record's key
 *     and value and a fixed overhead). A snapshot holds the whole open backlog, so counting
 *     records alone would write a growing backlog whole every `everyRecords` records: O(n²)
 *     over its growth. With the bytes rule the snapshots' sizes grow geometrically with it:
 *     everything snapshotted is at most about twice what was appended (bounded write
 *     amplification), and an open reads at most one snapshot's worth of records after the
 *     latest snapshot, besides `everyRecords`. The size of the snapshot a view was opened
 *     from counts as its latest (none: 0, records alone decide the first);
 *   - every `everyMs` if anything was appended since the last one (the queue's timer asks),
 *     whatever its size: the timer bounds how old the latest snapshot is;
 *   - on a clean stop, unless the latest snapshot covers the view already.
 * A failure is a warning (RUNLOG_SNAPSHOT_FAILED), never the queue's: the log is the truth,
 * a snapshot only shortens the next open.
 *
 * A snapshot is taken only when nothing is in flight: the view runs ahead of the log by the
 * appends in flight (their events are folded before they are durable, and their records'
 * offsets are not known yet), and a snapshot must hold exactly the records below the offset
 * it names. So a snapshot that is due waits for the moment an append completes with none
 * other in flight (Partition.commit asks `settled`). Under a load that never leaves the
 * partition idle it waits for the next lull, or the stop.
 */
import type { EventLog } from '../log/event-log.ts';
import { saveSnapshot, snapshotCovers, snapshotSize } from '../projector/snapshots.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import type { WarningListener } from '../warnings.ts';

export interface SnapshotSettings {
  /** A snapshot after this many records appended since the last one (and as many bytes as its size: see the top). */
  everyRecords: number;
  /** A snapshot this often (ms) while records were appended since the last one. */
  everyMs: number;
}

export const DEFAULT_SNAPSHOT_SETTINGS: SnapshotSettings = { everyRecords: 250_000, everyMs: 600_000 };

export class SnapshotKeeper {
  /** Records and bytes appended since the latest snapshot was taken. */
  #since = 0;
  #bytesSince = 0;
  /** The latest snapshot's size in bytes (taken, or the one the view was opened from; 0: none). */
  #lastSize = 0;
  #wanted = false;
  #taking: Promise<void> | null = null;

  constructor(
    private readonly log: EventLog,
    private readonly partition: number,
    /** null: snapshots are off for this queue. */
    private readonly settings: SnapshotSettings | null,
    private readonly warn: WarningListener,
  ) {}

  get #on(): boolean {
    return this.settings !== null && this.log.snapshots !== undefined;
  }

  /** `records` records of `bytes` bytes (as appendBytes counts them) were appended (durably). */
  appended(records: number, bytes: number): void {
    this.#since += records;
    this.#bytesSince += bytes;
  }

  /** The timer's tick: a snapshot at the next idle moment, if anything was appended since the last. */
  want(): void {
    if (this.#since > 0) this.#wanted = true;
  }

  /** Whether a snapshot should be taken at the next idle moment. */
  get due(): boolean {
    if (!this.#on || this.#taking !== null) return false;
    return this.#wanted || (this.#since >= this.settings!.everyRecords && this.#bytesSince >= this.#lastSize);
  }

  /** The view is replaced by `view` (rebuilt, acquired, released): what was counted was the old one's. */
  reset(view: PartitionView): void {
    this.#since = 0;
    this.#bytesSince = 0;
    this.#wanted = false;
    this.#lastSize = snapshotSize(view) ?? 0;
  }

  /** Takes a snapshot of `view`, which has nothing in flight, now (in this turn); resolves once saved (failures warned). */
  take(view: PartitionView): Promise<void> {
    if (!this.#on || this.#taking !== null) return this.#taking ?? Promise.resolve();
    this.#since = 0;
    this.#bytesSince = 0;
    this.#wanted = false;
    const taking = saveSnapshot(this.log, view).then(
      (size) => {
        this.#lastSize = size;
      },
      (error: unknown) => {
        const why = error instanceof Error ? error.message : String(error);
        this.warn({ code: 'RUNLOG_SNAPSHOT_FAILED', message: `snapshotting partition ${this.partition} failed: ${why}` });
      },
    );
    this.#taking = taking.finally(() => {
      this.#taking = null;
    });
    return this.#taking;
  }

  /** On a clean stop (nothing in flight): a last snapshot, unless the latest one covers the view already. */
  async final(view: PartitionView): Promise<void> {
    await this.#taking;
    if (!this.#on || view.nextOffset === 0n || snapshotCovers(view) === view.nextOffset) return;
    await this.take(view);
  }
}
