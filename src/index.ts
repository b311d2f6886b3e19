/** runlog's public API. */
export { RunlogError, isRunlogError, ERROR_CODES, type ErrorCode } from './errors.ts';
export { RunQueue } from './queue/run-queue.ts';
export { openRunQueue, openRunQueueOnLog, DEFAULT_PARTITIONS } from './queue/open-run-queue.ts';
export type * from './queue/types.ts';
export type { RunlogWarning, WarningListener } from './warnings.ts';
export type { EventLog, LogConfig, LogRecord, AppendRecord } from './log/event-log.ts';
export { openLog, openLogReadOnly } from './log/open-log.ts';
export { partitionOf } from './log/partitioner.ts';
export { encodeEvent, decodeEvent } from './events/codec.ts';
export type * from './events/types.ts';
export { replayPartition } from './projector/replay.ts';
export { Worker } from './worker/worker.ts';
export type {
  Handler,
  HandlerContext,
  HandlerResult,
  RunOutcome,
  Timers,
  WorkerEvent,
  WorkerMetricsSnapshot,
  WorkerOptions,
} from './worker/types.ts';
export { connect } from './client/index.ts';
export type { ConnectOptions, RemoteQueue, RetrySettings, TakeWait } from './client/index.ts';
