#!/usr/bin/env node
/**
 * runlog's command line, for the people who must answer "what happened to this ticket":
 *
 *   npm run runlog -- history <tenant> <entryId> [--dir ./data | --brokers host:port --topic name]
 *   npm run runlog -- replay [--dir ./data | --brokers host:port --topic name]
 *
 * `history` prints the entry's audit trail from the log, one event a line. `replay` folds
 * the whole log into a fresh view and prints what it holds. Both only read: the log is
 * opened read-only (openLogReadOnly), so they create, repair, cut and lock nothing, fence
 * no Kafka writer, and read a log that a live writer holds. A log that does not exist is
 * an error (exit 2); a torn tail or a repair the log would need is reported on stderr.
 */
import { parseArgs } from 'node:util';
import { isRunlogError } from '../errors.ts';
import type { EventLog, LogConfig } from '../log/event-log.ts';
import { openLogReadOnly } from '../log/open-log.ts';
import type { RunlogWarning } from '../warnings.ts';
import { replayPartition } from '../projector/replay.ts';
import { addMetrics, emptyMetrics } from '../../projections/metrics.ts';
import { entryHistory, formatHistoryItem } from './history.ts';

const USAGE = `usage:
  runlog history <tenant> <entryId> [--dir DIR | --brokers HOST:PORT[,...] --topic NAME]
  runlog replay [--dir DIR | --brokers HOST:PORT[,...] --topic NAME]
(the default log is --dir ./data)`;

function logConfig(values: { dir?: string; brokers?: string; topic?: string }): LogConfig {
  if (values.brokers !== undefined || values.topic !== undefined) {
    if (values.brokers === undefined || values.topic === undefined) throw new UsageError('--brokers and --topic go together');
    return { kind: 'kafka', brokers: values.brokers.split(','), topic: values.topic };
  }
  return { kind: 'file', dir: values.dir ?? './data' };
}

class UsageError extends Error {}

async function history(log: EventLog, [tenant, entryId]: string[]): Promise<void> {
  if (tenant === undefined || entryId === undefined) throw new UsageError('history needs <tenant> <entryId>');
  const items = await entryHistory(log, tenant, entryId);
  if (items.length === 0)
    console.log(`no events of ticket ${entryId} for tenant ${tenant} (pruned and compacted away, or another tenant's)`);
  for (const item of items) console.log(formatHistoryItem(item));
}

/** Folds every partition into a fresh view. Only reads: it claims nothing, so a live Kafka writer is not fenced. */
async function replay(log: EventLog): Promise<void> {
  const started = performance.now();
  const views = await Promise.all(Array.from({ length: log.partitions }, (_, p) => replayPartition(log, p)));
  const seconds = (performance.now() - started) / 1000;
  console.log(`replayed ${views.length} partition(s) in ${seconds.toFixed(2)} s`);
  const totals = emptyMetrics();
  for (const view of views) {
    addMetrics(totals, view.metrics);
    console.log(
      `  partition ${view.partition}: ${view.entries.size} entries (${view.openCount} open), ${view.threads.size} threads, next offset ${view.nextOffset}`,
    );
  }
  const { enqueued, succeeded, failed, retried, expired, cancelled, dropped } = totals;
  console.log(
    `  enqueued ${enqueued}  succeeded ${succeeded}  failed ${failed}  retried ${retried}  expired ${expired}  cancelled ${cancelled}  pruned ${dropped}`,
  );
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { dir: { type: 'string' }, brokers: { type: 'string' }, topic: { type: 'string' } },
  });
  const [command, ...rest] = positionals;
  if (command !== 'history' && command !== 'replay')
    throw new UsageError(command === undefined ? 'no command' : `unknown command ${command}`);
  const log = await openLogReadOnly(logConfig(values), printWarning);
  try {
    if (command === 'history') await history(log, rest);
    else await replay(log);
  } finally {
    await log.close();
  }
}

/** What the log reports on open (a torn tail, left as it is), on stderr: the output stays the answer. */
function printWarning({ code, message }: RunlogWarning): void {
  console.error(`runlog: warning ${code}: ${message}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
    console.error(`runlog: ${error.message}\n${USAGE}`);
  } else {
    console.error(`runlog: ${isRunlogError(error) ? `${error.code}: ${error.message}` : String(error)}`);
  }
  process.exitCode = 2;
});
