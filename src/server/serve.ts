/**
 * `runlog serve` as a function: open the queue the configuration names, start the HTTP API
 * over it, log where it listens; stop() shuts both down gracefully.
 *
 * The loopback rule: with no tokens configured every caller is anonymous with every role,
 * so the server listens on loopback only (127.0.0.1, or ::1 when an IPv6 host was asked),
 * whatever host was asked, and logs a warning naming the host asked for.
 *
 * Shutdown, in order: the server stops accepting connections, ends its long-polls with their
 * "nothing" answers (a take long-poll ends without a lease: nothing is leased that nobody
 * hears of), refuses requests arriving on open connections (Stopped) and answers every
 * request in flight; only then is the queue stopped (its appends in flight made durable, the
 * log closed). So every answer given was made durable first, and a lease in the log was
 * answered to its taker (or its taker went away before the answer was written).
 */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { CommandIntake } from '../cluster/command-intake.ts';
import type { ClusterNode } from '../cluster/node.ts';
import type { PartitionWork } from '../cluster/types.ts';
import type { CommandSource } from '../log/command-source.ts';
import type { RunlogWarning } from '../warnings.ts';
import { openRunQueue } from '../queue/open-run-queue.ts';
import type { RunQueue } from '../queue/run-queue.ts';
import type { RunQueueOptions } from '../queue/types.ts';
import { openAuthenticator } from './auth.ts';
import type { ServeConfig } from './config.ts';
import { startServer, type RunningServer } from './start-server.ts';
import type { Logger } from './types.ts';

export interface Serving {
  readonly url: string;
  readonly port: number;
  readonly queue: RunQueue;
  /** Graceful: the server closes (in-flight requests answered, long-polls ended), then the queue stops. */
  stop(): Promise<void>;
}

export async function serve(config: ServeConfig, logger: Logger): Promise<Serving> {
  const queue = await openRunQueue(queueOptions(config, logger));
  let node: ClusterNode | undefined;
  try {
    node = await clusterNode(config, queue, logger);
  } catch (error) {
    await queue.stop();
    throw error;
  }
  let server: RunningServer;
  try {
    server = await startServer({
      queue,
      log: queue.log,
      authenticator: openAuthenticator(config.tokens),
      logger,
      host: bindHost(config, logger),
      port: config.port,
      maxInputBytes: queue.maxInputBytes,
      ...(config.tls === undefined ? {} : { tls: config.tls }),
      ...(node === undefined ? {} : { cluster: node }),
    });
  } catch (error) {
    await node?.stop();
    await queue.stop();
    throw error;
  }
  logger.log('info', 'serve.listening', listening(config, queue, server));
  if (node !== undefined) {
    try {
      await node.start(config.cluster?.advertiseUrl ?? advertisedUrl(server.url));
    } catch (error) {
      await stop(server, queue, logger, node);
      throw error;
    }
  }
  let stopped: Promise<void> | undefined;
  return { url: server.url, port: server.port, queue, stop: () => (stopped ??= stop(server, queue, logger, node)) };
}

/**
 * The cluster node of a serve in a group (its queue owns no partition until the group assigns it
 * some), with the command intake of the commands topic (`<topic>.commands`, created if missing):
 * the node starts it per partition once the partition serves and stops it before releasing it.
 * Loaded only then: the node brings kafkajs, which a file log never needs.
 */
async function clusterNode(config: ServeConfig, queue: RunQueue, logger: Logger): Promise<ClusterNode | undefined> {
  const { cluster, log } = config;
  if (cluster === undefined || log.kind !== 'kafka') return undefined;
  const [{ ClusterNode }, { CommandIntake }, { openKafkaCommandSource }] = await Promise.all([
    import('../cluster/node.ts'),
    import('../cluster/command-intake.ts'),
    import('../log/kafka/command-source.ts'),
  ]);
  const clientId = log.clientId === undefined ? {} : { clientId: log.clientId };
  const source = await openKafkaCommandSource({
    brokers: log.brokers,
    topic: log.topic,
    group: cluster.group,
    partitions: queue.partitions,
    ...clientId,
  });
  const onWarning = ({ code, message }: RunlogWarning) => logger.log('warn', 'queue.warning', { code, message });
  return new ClusterNode({
    queue,
    brokers: log.brokers,
    topic: log.topic,
    ...clientId,
    group: cluster.group,
    sessionTimeoutMs: cluster.sessionTimeoutMs,
    logger,
    work: commandWork(new CommandIntake({ queue, source, onWarning }), source),
  });
}

/** The intake as the node's per-partition work; closing it closes the commands source. */
function commandWork(intake: CommandIntake, source: CommandSource): PartitionWork {
  return {
    start: (partition) => intake.start(partition),
    stop: (partition) => intake.stop(partition),
    close: async () => {
      await intake.stopAll();
      await source.close();
    },
  };
}

/** The URL to advertise by default: the server's own, with this machine's host name for a wildcard address. */
function advertisedUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = hostname();
  return url.origin;
}

function queueOptions(config: ServeConfig, logger: Logger): RunQueueOptions {
  const options: RunQueueOptions = {
    log: config.log,
    onWarning: ({ code, message }: RunlogWarning) => logger.log('warn', 'queue.warning', { code, message }),
  };
  if (config.partitions !== undefined) options.partitions = config.partitions;
  if (config.maxInputBytes !== undefined) options.maxInputBytes = config.maxInputBytes;
  if (config.ticketLifetimeMs !== undefined) options.retention = { ticketLifetimeMs: config.ticketLifetimeMs };
  if (config.cluster !== undefined) options.ownership = 'assigned';
  return options;
}

/** The host to listen on: the one asked for, or, without tokens, a loopback address (and a warning). */
function bindHost(config: ServeConfig, logger: Logger): string {
  if (config.tokens !== undefined) return config.host;
  const host = loopbackFor(config.host);
  const asked = host === config.host ? '' : `, not on ${config.host} as asked`;
  logger.log('warn', 'serve.loopback-only', {
    message: `no tokens configured: every caller may do everything, so runlog listens on loopback only (${host})${asked}; configure tokens (--tokens FILE or RUNLOG_TOKENS) to serve other hosts`,
    hostAsked: config.host,
    host,
  });
  return host;
}

/** `host` itself if it is a loopback address; else 127.0.0.1 (::1 for an IPv6 host). */
export function loopbackFor(host: string): string {
  if (isIP(host) === 4 && host.startsWith('127.')) return host;
  if (host === '::1') return host;
  return isIP(host) === 6 ? '::1' : '127.0.0.1';
}

function listening(config: ServeConfig, queue: RunQueue, server: RunningServer): Record<string, unknown> {
  const log =
    config.log.kind === 'kafka'
      ? { log: 'kafka', topic: config.log.topic }
      : { log: config.log.kind, dir: 'dir' in config.log ? config.log.dir : undefined };
  return {
    url: server.url,
    port: server.port,
    tls: config.tls !== undefined,
    tokens: config.tokens?.records.length ?? 0,
    ...log,
    partitions: queue.partitions,
    maxInputBytes: queue.maxInputBytes,
    ...(config.cluster === undefined ? {} : { group: config.cluster.group }),
  };
}

/** A cluster node leaves its group and releases its partitions first; then the server closes, then the queue stops. */
async function stop(server: RunningServer, queue: RunQueue, logger: Logger, node: ClusterNode | undefined): Promise<void> {
  try {
    await node?.stop();
  } finally {
    try {
      await server.close();
    } finally {
      await queue.stop();
    }
  }
  logger.log('info', 'serve.stopped');
}
