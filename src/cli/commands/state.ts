/** `runlog state --at WHEN`: the queue, or one entry, as it was at a time or offset of the log. */
import { addMetrics, emptyMetrics } from '../../../projections/metrics.ts';
import { RunlogError } from '../../errors.ts';
import { parseEntryId, wasIssued } from '../../queue/entry-id.ts';
import type { PartitionView } from '../../../projections/partition-view.ts';
import { toPublicEntry } from '../../queue/public-entry.ts';
import type { Entry } from '../../queue/types.ts';
import { describe } from '../../validation/index.ts';
import { EXIT_OK, UsageError, type CliIo, type Command, type OptionValues } from '../command.ts';
import { entryBlock, entryLine } from '../entry-text.ts';
import { foldUntil, parseStatePoint, statePointOf, type FoldedPartition, type StatePoint } from '../fold-until.ts';
import { JSON_OPTION, LOG_OPTIONS, flag, integerOption, logConfigOf, stringOption, textOption } from '../options.ts';
import { formatTime, writeJson, writeLine } from '../output.ts';
import { withReadLog } from '../read-log.ts';

export const state: Command = {
  name: 'state',
  summary: 'the queue (its open entries and counts), or one entry, as it was at a time or offset of the log (reads only; also a live log)',
  usage: '',
  positionals: { min: 0, max: 0 },
  options: {
    ...LOG_OPTIONS,
    at: {
      type: 'string',
      value: 'WHEN',
      help: 'required: a time (epoch ms or ISO date-time with zone), @OFFSET (with --partition) or @a,b,... (one offset per partition)',
    },
    entry: { type: 'string', value: 'TICKET', help: 'show this entry as it was, every field' },
    partition: { type: 'string', value: 'N', help: 'only partition N (and the partition of --at @OFFSET)' },
    tenant: { type: 'string', value: 'TENANT', help: "list only this tenant's open entries" },
    thread: { type: 'string', value: 'THREAD', help: "list only this thread's open entries" },
    agent: { type: 'string', value: 'AGENT', help: "list only this agent's open entries" },
    ...JSON_OPTION,
  },
  details: `The log is folded as the queue folds it, up to and including the record at each offset given, or
every event stamped at or before the time. Human output: per partition the last offset folded, open entries and
threads; then the open entries by tenant and thread in the order they run (ticket, submitted, agent, lease,
attempts, input); then the counts so far. With --entry: the entry's fields then (lease, attempts, outcome...);
a ticket never issued, or of which the log holds no record up to then (submitted later, or pruned since and
compacted away): TicketNotFound; pruned and compacted away, issued by then: TicketExpired (exit 1). On a
compacted log the state then is what compaction kept of it: an entry's submission, its attempts' starts and
its latest lease record (not the leases, extensions and yields before it). --json: { partitions: [{ partition, through, open,
threads }], entries: [Entry], totals }, or with --entry the Entry.`,
  async run({ values, io }) {
    const config = logConfigOf(values);
    const at = stringOption(values, 'at');
    if (at === undefined) throw new UsageError('state needs --at WHEN: a time, @OFFSET or @a,b,...');
    parseStatePoint(at); // the syntax, before the log is opened
    const entryId = textOption(values, 'entry');
    for (const name of ['tenant', 'thread', 'agent']) textOption(values, name);
    integerOption(values, 'partition', 0);
    return withReadLog(config, io, async (log) => {
      const partition = integerOption(values, 'partition', 0, log.partitions - 1);
      const point = statePointOf(at, log.partitions, partition);
      if (entryId !== undefined) {
        const parsed = parseEntryId(entryId, log.partitions);
        if (parsed === null) throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
        if (partition !== undefined && partition !== parsed.partition)
          throw new UsageError(`--entry ${entryId} lies in partition ${parsed.partition}, not in --partition ${partition}`);
        const folded = await foldUntil(log, parsed.partition, point, entryId);
        if (folded.watched === undefined) throw notThere(entryId, parsed.partition, folded.view, point);
        await printEntry(io, values, toPublicEntry(folded.watched), point);
        return EXIT_OK;
      }
      const partitions = partition === undefined ? Array.from({ length: log.partitions }, (_, p) => p) : [partition];
      const folded = await Promise.all(partitions.map((p) => foldUntil(log, p, point)));
      await printQueue(io, values, point, folded);
      return EXIT_OK;
    });
  },
};

/**
 * Why `entryId` is not in `view` (its partition folded up to `point`): issued by then, its
 * records are gone (TicketExpired, as the queue answers); an id its partition's key never made
 * (forged or altered) was never issued; else nothing of it lies up to the point. Neither of the
 * last two says more than the log can: a compaction since the point may have removed the records
 * of an entry pruned later, and with them what the log knew of its seqs by then (the third
 * tester: "not submitted yet" for an entry submitted before the point, "pruned at" the point for
 * one pruned two days after it).
 */
function notThere(entryId: string, partition: number, view: PartitionView, point: StatePoint): RunlogError {
  const ticket = describe(entryId);
  if (wasIssued(entryId, partition, view))
    return new RunlogError('TicketExpired', `ticket ${ticket} was pruned (${pointText(point)} or since) and its records compacted away`);
  // Issued later is possible only for an id the key made: the seqs issued by then are all below it.
  const later = wasIssued(entryId, partition, { ticketKey: view.ticketKey, issuedThrough: Number.MAX_SAFE_INTEGER });
  if (view.ticketKey !== null && !later) return new RunlogError('TicketNotFound', `ticket ${ticket} was never issued`);
  return new RunlogError(
    'TicketNotFound',
    `the log holds no record of ticket ${ticket} up to ${pointText(point)}: it was submitted later, or pruned since and its records compacted away`,
  );
}

function pointText(point: StatePoint): string {
  return point.kind === 'time' ? formatTime(point.at) : `@${point.through.map((o) => o ?? '-').join(',')}`;
}

async function printEntry(io: CliIo, values: OptionValues, entry: Entry, point: StatePoint): Promise<void> {
  if (flag(values, 'json')) await writeJson(io.stdout, entry);
  else await writeLine(io.stdout, entryBlock(entry, timeOf(point)));
}

/** The store time a point names (a time), against which a lease had run out or not; unknown for offsets. */
function timeOf(point: StatePoint): number | undefined {
  return point.kind === 'time' ? point.at : undefined;
}

function openEntries(values: OptionValues, folded: readonly FoldedPartition[]): Entry[] {
  const wanted = (name: string): string | undefined => stringOption(values, name);
  const entries: Entry[] = [];
  for (const { view } of folded)
    for (const thread of view.threads.values()) {
      if (wanted('tenant') !== undefined && thread.tenant !== wanted('tenant')) continue;
      if (wanted('thread') !== undefined && thread.thread !== wanted('thread')) continue;
      for (const entry of thread.openEntries())
        if (wanted('agent') === undefined || entry.agent === wanted('agent')) entries.push(toPublicEntry(entry));
    }
  return entries;
}

async function printQueue(io: CliIo, values: OptionValues, point: StatePoint, folded: readonly FoldedPartition[]): Promise<void> {
  const totals = emptyMetrics();
  for (const { view } of folded) addMetrics(totals, view.metrics);
  const partitions = folded.map(({ view, through }) => ({
    partition: view.partition,
    through,
    open: view.openCount,
    threads: [...view.threads.values()].filter((thread) => thread.openCount > 0).length,
  }));
  const entries = openEntries(values, folded);
  if (flag(values, 'json')) {
    await writeJson(io.stdout, { partitions, entries, totals });
    return;
  }
  await writeLine(io.stdout, `the queue at ${pointText(point)}:`);
  for (const p of partitions)
    await writeLine(io.stdout, `  partition ${p.partition}: through @${p.through ?? '-'}, ${p.open} open entries in ${p.threads} threads`);
  let thread = '';
  for (const entry of entries) {
    const name = `${entry.tenant}/${entry.thread}`;
    if (name !== thread) await writeLine(io.stdout, `${name}:`);
    thread = name;
    await writeLine(io.stdout, `  ${entryLine(entry, timeOf(point))}`);
  }
  const { enqueued, succeeded, failed, retried, expired, cancelled, dropped } = totals;
  await writeLine(
    io.stdout,
    `so far: enqueued ${enqueued}  succeeded ${succeeded}  failed ${failed}  retried ${retried}  expired ${expired}  cancelled ${cancelled}  pruned ${dropped}`,
  );
}
