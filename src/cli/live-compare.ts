/**
 * `runlog verify --url`: the replayed views against what a running server answers now. Each
 * entry the replay holds (open, or closed and retained: read back from the log by the
 * ticket index's offsets) is asked of the server (`entry(tenant, id)`) and compared as JSON.
 * The server's log moves on while we ask, so an entry that differs is not yet a mismatch:
 * the views are caught up with what was appended since (a fresh read-only open) and the
 * entry asked again, up to ROUNDS times; what still differs then is reported. An entry the
 * server no longer knows (pruned: TicketExpired) must be pruned in the caught-up replay too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PartitionView } from '../../projections/partition-view.ts';
import { RunlogError, isRunlogError } from '../errors.ts';
import type { EventLog, LogConfig } from '../log/event-log.ts';
import { catchUp } from '../projector/replay.ts';
import { readClosedEntry } from '../queue/closed-entries.ts';
import { toPublicEntry } from '../queue/public-entry.ts';
import type { Entry, RunQueueApi } from '../queue/types.ts';
import type { CliIo } from './command.ts';
import { toJsonText } from './output.ts';
import { withReadLog } from './read-log.ts';

const ROUNDS = 5;
const PAUSE_MS = 200;

export interface Mismatch {
  entryId: string;
  tenant: string;
  replayed: unknown;
  live: unknown;
}

export interface LiveComparison {
  compared: number;
  mismatches: Mismatch[];
}

export async function compareWithServer(
  config: LogConfig,
  io: CliIo,
  views: readonly PartitionView[],
  server: RunQueueApi,
): Promise<LiveComparison> {
  // Open entries are whole in the views; retained closed ones are rows of the ticket index, read back from the log.
  let pending = views.flatMap((view) =>
    [...view.entries.values(), ...view.oldestClosed(Infinity, () => true)].map((entry) => ({
      view,
      tenant: entry.tenant,
      entryId: entry.entryId,
    })),
  );
  const compared = pending.length;
  let mismatches: Mismatch[] = [];
  for (let round = 1; pending.length > 0; round++) {
    mismatches = await withReadLog(config, io, async (log) => {
      if (round > 1) for (const view of views) await catchUp(log, view.partition, view);
      const found: Mismatch[] = [];
      for (const item of pending) {
        const replayed = await replayedEntry(log, item.view, item.entryId);
        const live = await liveEntry(server, item.tenant, item.entryId);
        const replayedText = replayed === undefined ? '"TicketExpired"' : canonical(replayed);
        if (replayedText !== live)
          found.push({ entryId: item.entryId, tenant: item.tenant, replayed: JSON.parse(replayedText), live: JSON.parse(live) });
      }
      return found;
    });
    if (mismatches.length === 0 || round === ROUNDS) break;
    const differing = new Set(mismatches.map((m) => m.entryId));
    pending = pending.filter((item) => differing.has(item.entryId));
    await sleep(PAUSE_MS);
  }
  return { compared, mismatches };
}

/** The replayed entry `entryId` whole: open in the view, or closed and read back from `log`; undefined once pruned. */
async function replayedEntry(log: EventLog, view: PartitionView, entryId: string): Promise<Entry | undefined> {
  const open = view.entries.get(entryId);
  if (open !== undefined) return toPublicEntry(open);
  const ticket = view.closedTicket(entryId);
  const stored = ticket === undefined ? null : view.closed.stored(ticket);
  return stored === null ? undefined : toPublicEntry(await readClosedEntry(log, view.partition, ticket!, stored));
}

/**
 * The server's entry as JSON text, or "TicketExpired" once it was pruned. A ticket the log
 * holds that the server says was never issued is most often one of a tenant the token does
 * not cover (a scoped token reads other tenants' tickets as never issued, so as to say nothing
 * of them): said so, rather than left to read as a damaged log (the newcomer).
 */
async function liveEntry(server: RunQueueApi, tenant: string, entryId: string): Promise<string> {
  try {
    return canonical(await server.entry(tenant, entryId));
  } catch (error) {
    if (isRunlogError(error) && error.code === 'TicketExpired') return '"TicketExpired"';
    if (isRunlogError(error) && error.code === 'TicketNotFound') {
      const why = `the server says ticket ${JSON.stringify(entryId)} of tenant ${JSON.stringify(tenant)}, which the log holds, was never issued: the token given may not cover tenant ${JSON.stringify(tenant)} (--url compares every tenant's entries: give a token of all of them, an admin's with tenants "*"), or the server serves another log`;
      throw new RunlogError('TicketNotFound', why, { cause: error });
    }
    throw error;
  }
}

/** JSON text with every object's keys sorted: the same entry reads the same whichever side built it. */
function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(JSON.parse(toJsonText(value))));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
