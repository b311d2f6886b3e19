/**
 * When a partition's view is snapshotted (src/projector/snapshots.ts takes and reads them):
 * after every `everyRecords` records appended, every `everyMs` if anything was appended
 * since the last one (the queue's timer asks), and on a clean stop. A failure is a warning
 * (RUNLOG_SNAPSHOT_FAILED), never the queue's: the log is the truth, a snapshot only
 * shortens the next open.
 *
 * A snapshot is taken only when nothing is in flight: the view runs ahead of the log by the
 * appends in flight (their events are folded before they are durable, and their records'
 * offsets are not known yet), and a snapshot must hold exactly the records below the offset
 * it names. So a snapshot that is due waits for the moment an append completes with none
 * other in flight (Partition.commit asks `settled`). Under a load that never leaves the
 * partition idle it waits for the next lull, or the stop.
 */
import type { EventLog } from '../log/event-log.ts';
import { saveSnapshot, snapshotCovers } from '../projector/snapshots.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import type { WarningListener } from '../warnings.ts';

export interface SnapshotSettings {
  /** A snapshot after this many records appended since the last one. */
  everyRecords: number;
  /** A snapshot this often (ms) while records were appended since the last one. */
  everyMs: number;
}

export const DEFAULT_SNAPSHOT_SETTINGS: SnapshotSettings = { everyRecords: 250_000, everyMs: 600_000 };

export class SnapshotKeeper {
  #since = 0;
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

  /** `records` records were appended (durably). */
  appended(records: number): void {
    this.#since += records;
  }

  /** The timer's tick: a snapshot at the next idle moment, if anything was appended since the last. */
  want(): void {
    if (this.#since > 0) this.#wanted = true;
  }

  /** Whether a snapshot should be taken at the next idle moment. */
  get due(): boolean {
    return this.#on && this.#taking === null && (this.#wanted || this.#since >= this.settings!.everyRecords);
  }

  /** The view is replaced (rebuilt, acquired, released): what was counted was the old one's. */
  reset(): void {
    this.#since = 0;
    this.#wanted = false;
  }

  /** Takes a snapshot of `view`, which has nothing in flight, now (in this turn); resolves once saved (failures warned). */
  take(view: PartitionView): Promise<void> {
    if (!this.#on || this.#taking !== null) return this.#taking ?? Promise.resolve();
    this.#since = 0;
    this.#wanted = false;
    const taking = saveSnapshot(this.log, view).then(
      () => undefined,
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
