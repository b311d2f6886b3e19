/**
 * The logs a benchmark runs on: `--log file` (the embedded log in a fresh temporary
 * directory, fsync on), `memory`, or `kafka` (KAFKA_BROKERS, default 127.0.0.1:9092, a
 * fresh topic per log). A LogSite can be opened more than once (cold starts) and removed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { LogConfig } from '../src/log/event-log.ts';

export type LogKind = 'file' | 'memory' | 'kafka';

export interface LogSite {
  readonly config: LogConfig;
  /** `--partitions N` (the bench passes 1 unless told); undefined: the log's own default. */
  readonly partitions?: number;
  /** Deletes what the log left behind (the directory; a Kafka topic is left to the broker's retention). */
  remove(): Promise<void>;
}

export async function createLogSite(kind: LogKind, name: string, partitions?: number): Promise<LogSite> {
  const site = await createSite(kind, name);
  return partitions === undefined ? site : { ...site, partitions };
}

async function createSite(kind: LogKind, name: string): Promise<LogSite> {
  if (kind === 'memory') return { config: { kind: 'memory' }, remove: async () => {} };
  if (kind === 'kafka') {
    const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
    const topic = `runlog-bench-${name}-${randomUUID().slice(0, 8)}`;
    return { config: { kind: 'kafka', brokers, topic, clientId: 'runlog-bench' }, remove: async () => {} };
  }
  const dir = await mkdtemp(join(tmpdir(), `runlog-bench-${name}-`));
  return { config: { kind: 'file', dir, fsync: true }, remove: () => rm(dir, { recursive: true, force: true }) };
}
