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
export { defineProjection } from '../projections/projection.ts';
export type { Projection, ProjectionDefinition, RecordPosition, StateCodec } from '../projections/projection.ts';
export { runProjection } from './projector/run-projection.ts';
export type { LogPoint, RunOptions, RunOrder } from './projector/run-options.ts';
export type { ProjectionResult } from './projector/projection-result.ts';
export { memoryCheckpoints, type CheckpointStore } from './projector/checkpoint-store.ts';
export { fileCheckpoints } from './projector/file-checkpoints.ts';
export { kafkaCheckpoints, type KafkaCheckpointOptions } from './projector/kafka-checkpoints.ts';
export { openCheckpoints } from './projector/open-checkpoints.ts';
export { tenantUsage, tenantUsageRows, type TenantUsage, type TenantUsageState } from '../projections/tenant-usage.ts';
export { agentOutcomes, agentOutcomeRows, type AgentOutcomes, type AgentOutcomesState } from '../projections/agent-outcomes.ts';
export { DURATION_BUCKETS_MS, quantileMs, type Distribution } from '../projections/durations.ts';
export { failuresByError, failureGroups, errorSignature, type FailureGroup, type FailuresState } from '../projections/failures-by-error.ts';
export { threadTimeline, entryTimeline, type TimelineItem } from '../projections/timeline.ts';
export { queueViewProjection } from '../projections/queue-view.ts';
export { entrySummaries, type EntrySummaries, type EntrySummary } from '../projections/entry-summaries.ts';
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
