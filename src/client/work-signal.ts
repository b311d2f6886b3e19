/**
 * onWork over HTTP: one Server-Sent Events stream (GET /v1/work) per client, opened by the
 * first listener and kept until stop(). Each `work` event calls every listener (as the
 * queue's onWork does, through the same WorkListeners).
 *
 * A signal sent while the stream was not open is lost, so every time the stream opens (the
 * first time too) the listeners are called once: a worker then asks for work it may have
 * missed. The server registers its onWork before it answers the stream's headers, so nothing
 * durable after that answer goes unsignalled. A stream that ends or fails is opened again
 * after a pause (src/retry.ts's Backoff: 100 ms doubling to 5 s, reset by each open); one
 * that goes quiet longer than three of the server's 15 s pings is taken for dead and opened
 * again. A failure to open is a warning (RUNLOG_WORK_STREAM) once per outage, and so is the
 * stream coming back; meanwhile a Worker still finds work by its idle poll (pollMs).
 */
import type { IncomingMessage } from 'node:http';
import { describe } from '../describe.ts';
import { WorkListeners } from '../queue/work-listeners.ts';
import { Backoff } from '../retry.ts';
import type { RunlogWarning } from '../warnings.ts';
import type { Http } from './http.ts';

/** Three missed pings of the server (every 15 s): the connection is taken for dead. */
const QUIET_MS = 45_000;
const WORK_EVENT = /^event: ?work$/m;

export class WorkSignal {
  readonly #listeners: WorkListeners;
  readonly #stopping = new AbortController();
  #started = false;
  #failing = false;

  constructor(
    private readonly http: Http,
    private readonly warn: (warning: RunlogWarning) => void,
  ) {
    this.#listeners = new WorkListeners(warn);
  }

  /** Adds `listener` (opening the stream if it is the first); answers the function that removes it. */
  add(listener: () => void): () => void {
    const remove = this.#listeners.add(listener);
    if (!this.#started && !this.#stopping.signal.aborted) {
      this.#started = true;
      void this.#run();
    }
    return remove;
  }

  stop(): void {
    this.#stopping.abort();
  }

  /** Opens the stream, reads it until it ends, pauses, and again, until stop. */
  async #run(): Promise<void> {
    const signal = this.#stopping.signal;
    let pauses = new Backoff({ firstMs: 100, maxMs: 5_000, signal });
    while (!signal.aborted) {
      try {
        const response = await this.http.stream('/v1/work', signal);
        pauses = new Backoff({ firstMs: 100, maxMs: 5_000, signal });
        this.#opened();
        await this.#read(response);
      } catch (error) {
        if (signal.aborted) return;
        this.#failed(error);
      }
      try {
        await pauses.after(undefined);
      } catch {
        return; // stopped during the pause
      }
    }
  }

  #opened(): void {
    if (this.#failing) this.warn({ code: 'RUNLOG_WORK_STREAM', message: 'the work signal stream of the runlog server is open again' });
    this.#failing = false;
    this.#listeners.notify();
  }

  #failed(error: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.warn({
      code: 'RUNLOG_WORK_STREAM',
      message: `the work signal stream of the runlog server failed, opening it again: ${describe(error)}`,
    });
  }

  /** Calls the listeners for each `work` event, until the stream ends (or goes quiet for too long). */
  async #read(response: IncomingMessage): Promise<void> {
    let buffer = '';
    response.setEncoding('utf8');
    let quiet = setTimeout(() => response.destroy(), QUIET_MS);
    try {
      for await (const chunk of response) {
        clearTimeout(quiet);
        quiet = setTimeout(() => response.destroy(), QUIET_MS);
        buffer += chunk as string;
        const messages = buffer.split(/\r?\n\r?\n/);
        buffer = messages.pop()!;
        if (messages.some((message) => WORK_EVENT.test(message))) this.#listeners.notify();
      }
    } finally {
      clearTimeout(quiet);
    }
  }
}
