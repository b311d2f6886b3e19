/**
 * Opening a RunQueue: open (or take) the log, claim every partition (fencing a previous
 * Kafka writer), replay each into its view, anchor the store clock, then serve, and start the
 * retention sweep if asked. The store clock starts no earlier than the earliest of the
 * partitions' latest events; a partition whose latest event is later (stamped by a node whose
 * clock ran ahead) starts at it, as a lead of its own, as acquire() does (partition-lead.ts):
 * starting the one clock at the latest event of all would expire the leases granted in the
 * other partitions' times early. Each partition's
 * view is opened from its latest valid snapshot, if any, and the records after it
 * (src/projector/snapshots.ts). With ownership
 * 'assigned' (a cluster node) nothing is claimed or replayed: RunQueue.acquire() does that
 * for each partition the node's consumer group assigns it.
 */
import type { EventLog, LogConfig } from '../log/event-log.ts';
import { checkEventLog } from '../log/log-arguments.ts';
import { openLog } from '../log/open-log.ts';
import { openView } from '../projector/snapshots.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { requireInteger, requireObject } from '../validation/index.ts';
import { checkQueueOptions, inputLimit, QUEUE_OPTION_KEYS, queueSettings, type QueueSettings } from './queue-options.ts';
import { RunQueue } from './run-queue.ts';
import { StoreClock } from './store-clock.ts';
import type { RunQueueOptions } from './types.ts';
import type { WarningListener } from '../warnings.ts';
export { DEFAULT_PARTITIONS } from '../log/open-log.ts';
export { DEFAULT_MAX_INPUT_BYTES } from './queue-options.ts';
export { DEFAULT_CLOSED_CACHE_BYTES } from './closed-entries.ts';

export async function openRunQueue(options: RunQueueOptions): Promise<RunQueue> {
  const { log: config, partitions, ...settings } = requireObject('options', options, QUEUE_OPTION_KEYS);
  // Omitted: the log's own default (a file log keeps the count it was created with).
  const count = partitions === undefined ? undefined : requireInteger('partitions', partitions, 1, 10_000);
  const checked = queueSettings(settings);
  const log = await openLog(config as LogConfig, count, checked.warnings.report);
  try {
    return await queueOnLog(log, checked);
  } catch (error) {
    await log.close();
    throw error;
  }
}

/**
 * A RunQueue over a log the caller opened (tests wrap real logs to inject faults).
 * Replays every partition of the log into the view before serving. The log's own
 * warnings (a torn tail cut on open) went where the caller's log options sent them.
 */
export async function openRunQueueOnLog(log: EventLog, options: Omit<RunQueueOptions, 'log' | 'partitions'> = {}): Promise<RunQueue> {
  return queueOnLog(checkEventLog(log), checkQueueOptions(options));
}

async function queueOnLog(log: EventLog, settings: QueueSettings): Promise<RunQueue> {
  const { clock, capacity, maxInputBytes: asked, retention, warnings, ownership, snapshots, closedCacheBytes } = settings;
  const maxInputBytes = inputLimit(asked, log);
  const views = ownership === 'all' ? await claimAndReplay(log, warnings.report) : Array.from({ length: log.partitions }, () => null);
  const clockNow = new StoreClock(clock, earliestLatestAt(views), warnings.report);
  const queue = new RunQueue(log, views, clockNow, capacity, maxInputBytes, warnings, ownership, snapshots, closedCacheBytes);
  if (retention !== null) queue.sweepEvery(retention);
  return queue;
}

/** The earliest of the partitions' latest event times (partitions without events have none); 0 for none. */
function earliestLatestAt(views: readonly (PartitionView | null)[]): number {
  const latest = views.flatMap((view) => (view === null || view.lastAt === 0 ? [] : [view.lastAt]));
  return latest.length === 0 ? 0 : Math.min(...latest);
}

/** Every partition claimed (fencing a previous writer), then opened from its latest valid snapshot and the records after it: the queue owns them all. */
async function claimAndReplay(log: EventLog, warn: WarningListener): Promise<PartitionView[]> {
  const partitions = Array.from({ length: log.partitions }, (_, p) => p);
  if (log.claim !== undefined) await Promise.all(partitions.map((p) => log.claim!(p)));
  return Promise.all(partitions.map(async (p) => (await openView(log, p, warn)).view));
}
