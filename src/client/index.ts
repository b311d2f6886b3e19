/** The HTTP client of a runlog server: `connect` answers a RunQueueApi (a RemoteQueue). */
export { connect, type ConnectOptions } from './connect.ts';
export type { RemoteQueue, TakeWait } from './remote-queue.ts';
export type { RetrySettings } from './retry-policy.ts';
