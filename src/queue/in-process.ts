/**
 * What the in-process Worker asks of a RunQueue beyond RunQueueApi: closes of leases the
 * queue answered itself, whose closed entries the Worker throws away (src/worker/closer.ts).
 * Keyed by a symbol, so it is no part of the public API; a queue without it (the HTTP
 * client) is sent closeBatch.
 */
import type { RunlogError } from '../errors.ts';
import type { CloseRequest, LeaseClose, RunQueueApi } from './types.ts';

export const closeRuns: unique symbol = Symbol('runlog.closeRuns');

/** The close the Worker makes of most runs (succeeded, no result): closeRuns knows it checked. */
export const SUCCEEDED_RUN: CloseRequest = Object.freeze({ status: 'succeeded' });

export interface RunClosing {
  /**
   * closeBatch for leases a take of this queue answered (never seen by a handler): each item's
   * refusal, or null once its close is durable; no closed entry is built. Rejects as closeBatch
   * does (a malformed request: InvalidArgument for the whole batch, nothing written).
   */
  [closeRuns](closes: readonly LeaseClose[]): Promise<(RunlogError | null)[]>;
}

export function canCloseRuns(queue: RunQueueApi): queue is RunQueueApi & RunClosing {
  return typeof (queue as Partial<RunClosing>)[closeRuns] === 'function';
}
