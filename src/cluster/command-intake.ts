/**
 * The command intake: for each partition this node owns, it reads the commands topic's
 * partition (a CommandSource: read_committed, from the committed offset of `<group>.commands`)
 * and has the queue answer each command on that partition (RunQueue.answerCommand), the
 * command's offset + 1 committed in the same transaction as its events and its
 * CommandAnswered (EventLog.append's `consumed`). So every command is answered exactly once,
 * whoever owns the partition and however often it changes hands.
 *
 * One loop per partition, started by the node once the partition serves (acquire() has
 * claimed it: the previous owner's open transactions are complete or aborted, so the
 * committed offset is where its answers stop) and stopped before the node releases it:
 *
 *   start ─▶ awaitServing (its generation) ─▶ committedOffset ─▶ tail: answer each command,
 *            in order, without waiting for the previous one's append (they share group commits)
 *   an answer fails (an append failed: the partition rebuilds; or another node fenced it)
 *            ─▶ stop reading, let the answers in flight settle ─▶ back to awaitServing
 *   awaitServing refuses with NotOwner or Stopped (the partition is not ours any more) ─▶ ends
 *   stop(partition) ─▶ ends (the answers in flight settle first)
 *
 * Why restarting is safe: answers carry the generation of the view they were read for, and
 * the queue refuses (never delays) a command once the partition left that view (a failed
 * append loses every append behind it, and a later command must not land without them). After
 * the rebuild, the committed offset is exactly past the last command whose transaction
 * committed, and the rebuilt view holds exactly those commands' events.
 *
 * A record that names no request id at all is skipped by the queue with a RUNLOG_COMMAND
 * warning; its offset is committed with the next command's answer.
 */
import { isRunlogError } from '../errors.ts';
import type { CommandAnswered } from '../events/types.ts';
import type { CommandSource } from '../log/command-source.ts';
import type { ConsumedOffset } from '../log/event-log.ts';
import { Backoff } from '../retry.ts';
import { emitProcessWarning, type WarningListener } from '../warnings.ts';

/** What the intake needs of the queue (a RunQueue). */
export interface IntakeQueue {
  awaitServing(partition: number): Promise<number>;
  answerCommand(
    partition: number,
    record: Uint8Array | null,
    options: { consumed: ConsumedOffset; generation: number },
  ): Promise<CommandAnswered | null>;
}

export interface CommandIntakeOptions {
  queue: IntakeQueue;
  source: CommandSource;
  /** Why a partition's commands are read again from the committed offset (RUNLOG_COMMAND_INTAKE). Default: process warnings. */
  onWarning?: WarningListener;
  /** At most this many answers in flight per partition before reading on (default 512). */
  maxInFlight?: number;
}

/** Pauses between restarts that found nothing to answer (a partition rebuilding, the broker away). */
const RESTART_BACKOFF = { firstMs: 50, maxMs: 5_000 };

interface Loop {
  stop: AbortController;
  done: Promise<void>;
}

export class CommandIntake {
  readonly #queue: IntakeQueue;
  readonly #source: CommandSource;
  readonly #warn: WarningListener;
  readonly #maxInFlight: number;
  readonly #loops = new Map<number, Loop>();

  constructor(options: CommandIntakeOptions) {
    this.#queue = options.queue;
    this.#source = options.source;
    this.#warn = options.onWarning ?? emitProcessWarning;
    this.#maxInFlight = options.maxInFlight ?? 512;
  }

  /** Starts answering `partition`'s commands (nothing if it does already). Call once the queue has acquired it. */
  start(partition: number): void {
    if (this.#loops.has(partition)) return;
    const stop = new AbortController();
    const loop: Loop = { stop, done: Promise.resolve() };
    loop.done = this.#run(partition, stop.signal).finally(() => {
      if (this.#loops.get(partition) === loop) this.#loops.delete(partition);
    });
    this.#loops.set(partition, loop);
  }

  /** Stops answering `partition`'s commands; resolves once its answers in flight have settled. Call before releasing it. */
  async stop(partition: number): Promise<void> {
    const loop = this.#loops.get(partition);
    if (loop === undefined) return;
    loop.stop.abort();
    await loop.done;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#loops.keys()].map((partition) => this.stop(partition)));
  }

  /** The partitions whose commands are being answered. */
  running(): number[] {
    return [...this.#loops.keys()].sort((a, b) => a - b);
  }

  async #run(partition: number, signal: AbortSignal): Promise<void> {
    let backoff = new Backoff({ ...RESTART_BACKOFF, signal });
    while (!signal.aborted) {
      try {
        const generation = await this.#queue.awaitServing(partition);
        const from = await this.#source.committedOffset(partition);
        if (await this.#answerFrom(partition, from, generation, signal)) backoff = new Backoff({ ...RESTART_BACKOFF, signal });
        if (signal.aborted) return;
      } catch (error) {
        if (signal.aborted) return;
        if (isRunlogError(error, 'NotOwner') || isRunlogError(error, 'Stopped')) return; // not ours any more: the node starts us again on acquire
        const why = error instanceof Error ? error.message : String(error);
        this.#warn({
          code: 'RUNLOG_COMMAND_INTAKE',
          message: `reading the commands of partition ${partition} again from the committed offset: ${why}`,
        });
        await backoff.after(error).catch(() => undefined); // only an abort ends it early; the loop then ends
      }
    }
  }

  /**
   * Answers the commands of `partition` from `from` until the signal aborts (resolves) or an
   * answer fails (rejects with why, once the answers in flight have settled). Resolves true
   * when some command was answered.
   */
  async #answerFrom(partition: number, from: bigint, generation: number, signal: AbortSignal): Promise<boolean> {
    const failed = new AbortController();
    let failure: { error: unknown } | null = null;
    let answered = false;
    const inFlight = new Set<Promise<void>>();
    const { topic, group } = this.#source;
    for await (const record of this.#source.tail(partition, from, AbortSignal.any([signal, failed.signal]))) {
      if (failure !== null) break;
      const consumed = { group, topic, partition, offset: record.offset + 1n };
      const answering = this.#queue.answerCommand(partition, record.value, { consumed, generation }).then(
        () => {
          answered = true;
        },
        (error: unknown) => {
          failure ??= { error };
          failed.abort();
        },
      );
      inFlight.add(answering);
      void answering.finally(() => inFlight.delete(answering));
      if (inFlight.size >= this.#maxInFlight) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (failure !== null) throw (failure as { error: unknown }).error;
    return answered;
  }
}
