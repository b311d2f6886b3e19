/**
 * Groups the closes of a worker's runs: the closes asked for in one turn of the event loop go
 * to the queue as one closeBatch (one request over HTTP, one append per partition in process)
 * at the next turn (setImmediate), and each run gets its own item's answer: its entry, or
 * its refusal thrown (LeaseNotCurrent, EntryClosed, ...), exactly as a close of its own would.
 *
 * A batch the queue refuses whole with InvalidArgument (one item's result too large for the
 * queue, say) is sent again as one close per item, so the refusal reaches only its own run.
 */
import { isRunlogError } from '../errors.ts';
import type { CloseRequest, Entry, Lease, RunQueueApi } from '../queue/types.ts';

/** As many closes as one batch may carry (MAX_BATCH in src/queue/requests.ts). */
const MAX_CLOSES = 10_000;

interface Pending {
  lease: Lease;
  request: CloseRequest;
  resolve(entry: Entry): void;
  reject(error: unknown): void;
}

export class Closer {
  #pending: Pending[] = [];
  #scheduled = false;

  constructor(private readonly queue: RunQueueApi) {}

  close(lease: Lease, request: CloseRequest): Promise<Entry> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ lease, request, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const pending = this.#pending;
    this.#pending = [];
    for (let i = 0; i < pending.length; i += MAX_CLOSES) void this.#send(pending.slice(i, i + MAX_CLOSES));
  }

  async #send(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.#one(batch[0]!);
    let answers;
    try {
      answers = await this.queue.closeBatch(batch.map(({ lease, request }) => ({ lease, request })));
    } catch (error) {
      if (isRunlogError(error, 'InvalidArgument')) return void (await Promise.all(batch.map((item) => this.#one(item))));
      for (const item of batch) item.reject(error);
      return;
    }
    answers.forEach((answer, i) => {
      const item = batch[i]!;
      if ('entry' in answer) item.resolve(answer.entry);
      else item.reject(answer.error);
    });
  }

  async #one(item: Pending): Promise<void> {
    try {
      item.resolve(await this.queue.close(item.lease, item.request));
    } catch (error) {
      item.reject(error);
    }
  }
}
