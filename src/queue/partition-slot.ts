/**
 * One partition a RunQueue writes: its view, its group-committing writer, and whether it
 * serves commands.
 *
 *   serving ──an append fails──▶ rebuilding ──claim + replay succeed──▶ serving
 *                                  │   ▲
 *                                  └───┘ claim or replay fails (the log is unreadable):
 *                                        pause (backing off), try again
 *   serving / rebuilding ──Fenced or Locked (an append, or the rebuild's claim)──▶ fenced, for good
 *   any ──the queue stops──▶ stopped
 *
 * A slot stops serving the moment its writer fails (the view then holds events the log may
 * not), not only once the failure is reported. A command that finds it not serving waits
 * (ready()) for the end of the next rebuild attempt, then decides against the rebuilt view;
 * if that attempt failed, the command fails with LogUnavailable (retriable) saying why the
 * rebuild fails now. A command's own refusal or failure is never handed to the next one:
 * only commands whose events were in or behind the failed append share its error (their
 * events were folded into the view the failure discarded).
 *
 * The rebuild claims the partition first (EventLog.claim: on Kafka it checks this process
 * still owns the partition, fencing nobody if not) and then replays it, so the replay sees
 * everything any earlier writer had acknowledged.
 */
import { RunlogError, isRunlogError } from '../errors.ts';
import type { EventLog } from '../log/event-log.ts';
import { replayPartition } from '../projector/replay.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { PartitionWriter } from './partition-writer.ts';

/** Backoff between attempts to rebuild a partition whose log could not be read. */
const REBUILD_FIRST_PAUSE_MS = 50;
const REBUILD_MAX_PAUSE_MS = 5_000;

type Mode = { kind: 'serving' } | { kind: 'rebuilding' } | { kind: 'fenced'; error: RunlogError } | { kind: 'stopped'; error: RunlogError };

export interface SlotHost {
  /** Whether the queue has stopped (rebuilds end then). */
  stopped(): boolean;
  /** Called when a rebuilt partition serves again (its entries may be takeable). */
  servingAgain(): void;
}

export class PartitionSlot {
  view: PartitionView;
  writer: PartitionWriter;
  #mode: Mode = { kind: 'serving' };
  /** Commands waiting for the end of the next rebuild attempt: null once it succeeded, else why not. */
  #waiters: Array<(failure: RunlogError | null) => void> = [];
  /** The pause before the next rebuild attempt (it keeps the process alive: commands may be waiting; stop ends it). */
  #pause: { timer: NodeJS.Timeout; end: () => void } | null = null;

  constructor(
    private readonly log: EventLog,
    readonly partition: number,
    view: PartitionView,
    private readonly host: SlotHost,
  ) {
    this.view = view;
    this.writer = this.#newWriter();
  }

  /** Whether commands may decide against the view now. */
  get serving(): boolean {
    return this.#mode.kind === 'serving' && !this.writer.failed;
  }

  /** Resolves once the slot serves; rejects with Fenced, Stopped, or the failed rebuild attempt's LogUnavailable. */
  async ready(): Promise<void> {
    while (!this.serving) {
      if (this.#mode.kind === 'fenced' || this.#mode.kind === 'stopped') throw this.#mode.error;
      const failure = await new Promise<RunlogError | null>((resolve) => this.#waiters.push(resolve));
      if (failure !== null) throw failure;
    }
  }

  /** Throws why the slot does not serve, if it does not (a guard; commands wait with ready() first). */
  requireServing(): void {
    if (this.serving) return;
    if (this.#mode.kind === 'fenced' || this.#mode.kind === 'stopped') throw this.#mode.error;
    throw new RunlogError('LogUnavailable', `partition ${this.partition} is being rebuilt from the log after a failed append`, {
      retriable: true,
    });
  }

  /** The queue stopped: waiting commands fail with Stopped, and no rebuild continues. */
  stop(): void {
    this.#mode = { kind: 'stopped', error: new RunlogError('Stopped', 'the run queue was stopped') };
    this.#settle(this.#mode.error);
    if (this.#pause !== null) {
      clearTimeout(this.#pause.timer);
      this.#pause.end();
    }
  }

  #newWriter(): PartitionWriter {
    return new PartitionWriter(this.log, this.partition, (error) => this.#writerFailed(error));
  }

  /** The writer failed and nothing is in flight any more: fenced for good, or rebuild. */
  #writerFailed(error: unknown): void {
    if (this.#mode.kind !== 'serving') return;
    if (isFinal(error)) return this.#fence(error);
    this.#mode = { kind: 'rebuilding' };
    void this.#rebuild();
  }

  async #rebuild(): Promise<void> {
    for (let pause = REBUILD_FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, REBUILD_MAX_PAUSE_MS)) {
      if (this.host.stopped() || this.#mode.kind !== 'rebuilding') return;
      try {
        await this.log.claim?.(this.partition);
        const view = await replayPartition(this.log, this.partition);
        if (this.host.stopped() || this.#mode.kind !== 'rebuilding') return;
        this.view = view;
        this.writer = this.#newWriter();
        this.#mode = { kind: 'serving' };
        this.#settle(null);
        this.host.servingAgain();
        return;
      } catch (error) {
        if (isFinal(error)) return this.#fence(error);
        const why = error instanceof Error ? error.message : String(error);
        this.#settle(
          new RunlogError(
            'LogUnavailable',
            `partition ${this.partition} cannot serve: rebuilding it from the log after a failed append fails: ${why}`,
            { cause: error, retriable: true },
          ),
        );
        await new Promise<void>((end) => (this.#pause = { timer: setTimeout(end, pause), end }));
        this.#pause = null;
      }
    }
  }

  #fence(error: RunlogError): void {
    this.#mode = { kind: 'fenced', error };
    this.#settle(error);
  }

  #settle(failure: RunlogError | null): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake(failure);
  }
}

/** Another writer owns the partition now (Kafka fencing, the file log's lock): this queue never serves it again. */
function isFinal(error: unknown): error is RunlogError {
  return isRunlogError(error, 'Fenced') || isRunlogError(error, 'Locked');
}
