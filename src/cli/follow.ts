/**
 * Following a log read-only, from another process than its writer (`runlog tail`).
 *
 * Kafka: the read-only log's own tail (a consumer), every partition merged (tailAll).
 * File: a read-only open is a snapshot of the log as it was (it sees no later appends, and
 * takes no lock, so it cannot hear the writer's appends either). So the follower reads the
 * snapshot to its end, closes it, waits `pollMs`, opens a fresh snapshot and reads on from
 * where it stopped. Compaction's holes are stepped over (the next offset goes on from each
 * snapshot's end). Warnings (a torn tail: maybe the writer's append in flight) print once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventLog, LogConfig } from '../log/event-log.ts';
import { tailAll, type PartitionRecord } from '../log/tail-all.ts';
import type { CliIo } from './command.ts';
import { openReadLog } from './read-log.ts';

export interface FollowPlan {
  partitions: readonly number[];
  /** The next offset to read of each of `partitions`. */
  from: readonly bigint[];
}

/**
 * The records of the log `config` names, from where `plan(log)` says, as they are appended,
 * until `signal` aborts.
 */
export async function* followLog(
  config: LogConfig,
  io: CliIo,
  plan: (log: EventLog) => Promise<FollowPlan>,
  pollMs: number,
): AsyncGenerator<PartitionRecord> {
  const warned = new Set<string>();
  let log = await openReadLog(config, io, warned);
  try {
    const { partitions, from } = await plan(log);
    if (config.kind !== 'file') {
      yield* tailAll(log, partitions, from, io.signal);
      return;
    }
    const next = [...from];
    while (!io.signal.aborted) {
      for (const [i, partition] of partitions.entries()) {
        for await (const record of log.read(partition, next[i]!)) {
          next[i] = record.offset + 1n;
          yield { partition, record };
          if (io.signal.aborted) return;
        }
        const end = await log.endOffset(partition);
        if (end > next[i]!) next[i] = end;
      }
      await log.close();
      if (!(await pause(pollMs, io.signal))) return;
      log = await openReadLog(config, io, warned);
    }
  } finally {
    await log.close();
  }
}

/** Waits `ms`; false if the signal aborted first. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
