/**
 * GET /v1/work: Server-Sent Events of the queue's work signal, for a remote worker's onWork.
 * Each onWork is an `event: work` message; signals coalesce, at most one pending per
 * connection: while the socket is backed up (its buffer full) further signals fold into the
 * one written on 'drain'. A `: ping` comment every 15 s keeps proxies from timing the stream
 * out. It ends when the client goes away or the server closes.
 */
import type { ServerResponse } from 'node:http';
import type { RouteRequest } from '../route.ts';

export const PING_EVERY_MS = 15_000;
const WORK_MESSAGE = 'event: work\ndata: {}\n\n';

export async function workStream({ queue, signal }: RouteRequest, response: ServerResponse): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  response.write(': runlog work signal\n\n');
  const stream = new WorkStream(response);
  const unlisten = queue.onWork(() => stream.signal());
  const ping = setInterval(() => response.write(': ping\n\n'), PING_EVERY_MS);
  // Stop writing in the same turn the signal aborts (the response closing under it): nothing is written to a closed stream.
  await new Promise<void>((resolve) => {
    const end = (): void => {
      unlisten();
      clearInterval(ping);
      resolve();
    };
    if (signal.aborted) return end();
    signal.addEventListener('abort', end, { once: true });
  });
  response.end();
}

class WorkStream {
  #pending = false;

  constructor(private readonly response: ServerResponse) {}

  signal(): void {
    if (this.#pending) return;
    if (!this.response.writableNeedDrain) return void this.response.write(WORK_MESSAGE);
    this.#pending = true;
    this.response.once('drain', () => {
      this.#pending = false;
      this.response.write(WORK_MESSAGE);
    });
  }
}
