/**
 * Groups the closes of a worker's runs: the closes asked for in one turn of the event loop go
 * to the queue together at the next turn (setImmediate), and each run hears its own item's
 * outcome: closed, or its refusal thrown (LeaseNotCurrent, EntryClosed, ...), exactly as a
 * close of its own would. An in-process RunQueue is sent its closeRuns (in-process.ts: no
 * closed entry built for an answer nobody reads); any other queue (over HTTP) closeBatch.
 *
 * A batch the queue refuses whole with InvalidArgument (one item's result too large for the
 * queue, say) is sent again as one close per item, so the refusal reaches only its own run;
 * so is each item answered InvalidArgument (a cluster's client answers so the items of a share
 * one node refused whole: cluster-queue.ts #perPartition).
 */
import { isRunlogError, type RunlogError } from '../errors.ts';
import { emptyList } from '../plain-objects.ts';
import { canCloseRuns, closeRuns } from '../queue/in-process.ts';
import type { CloseRequest, Lease, LeaseClose, RunQueueApi } from '../queue/types.ts';

/** As many closes as one batch may carry (MAX_BATCH in src/queue/requests.ts). */
const MAX_CLOSES = 10_000;

/** A close waiting for its batch: a class, not a literal, as a run holds it until its close is durable (src/plain-objects.ts). */
class Pending implements LeaseClose {
  constructor(
    readonly lease: Lease,
    readonly request: CloseRequest,
    readonly resolve: () => void,
    readonly reject: (error: unknown) => void,
  ) {}
}

export class Closer {
  #pending: Pending[] = [];
  #scheduled = false;
  readonly #closeAll: (closes: readonly LeaseClose[]) => Promise<(RunlogError | null)[]>;

  constructor(private readonly queue: RunQueueApi) {
    this.#closeAll = canCloseRuns(queue) ? (closes) => queue[closeRuns](closes) : (closes) => this.#closeBatch(closes);
  }

  close(lease: Lease, request: CloseRequest): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push(new Pending(lease, request, resolve, reject));
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const pending = this.#pending;
    this.#pending = emptyList();
    if (pending.length <= MAX_CLOSES) return void this.#send(pending);
    for (let i = 0; i < pending.length; i += MAX_CLOSES) void this.#send(pending.slice(i, i + MAX_CLOSES));
  }

  async #send(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.#one(batch[0]!);
    let refusals;
    try {
      refusals = await this.#closeAll(batch);
    } catch (error) {
      if (isRunlogError(error, 'InvalidArgument')) return void (await Promise.all(batch.map((item) => this.#one(item))));
      for (const item of batch) item.reject(error);
      return;
    }
    for (let i = 0; i < batch.length; i++) {
      const refusal = refusals[i];
      if (refusal === null) batch[i]!.resolve();
      else if (isRunlogError(refusal, 'InvalidArgument')) void this.#one(batch[i]!);
      else batch[i]!.reject(refusal);
    }
  }

  /** closeBatch's answers as closeRuns gives them: each item's refusal, or null. */
  async #closeBatch(closes: readonly LeaseClose[]): Promise<(RunlogError | null)[]> {
    const answers = await this.queue.closeBatch(closes.map(({ lease, request }) => ({ lease, request })));
    return answers.map((answer) => ('error' in answer ? answer.error : null));
  }

  async #one(item: Pending): Promise<void> {
    try {
      await this.queue.close(item.lease, item.request);
      item.resolve();
    } catch (error) {
      item.reject(error);
    }
  }
}
