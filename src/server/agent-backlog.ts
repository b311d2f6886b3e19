/**
 * Each agent's backlog and rates, for the web console (GET /v1/agents): a fold of the log the
 * server was given, by (tenant, agent). It keeps the open entries (agent, partition, submission
 * time, lease expiry) and, per minute of store-clock time over the last day, how many entries
 * were submitted, attempted, retried and closed by outcome.
 *
 * An open entry's times are in its partition's time, which runs ahead of store time by the
 * partition's lead (src/queue/partition-lead.ts: stamped by a node whose clock ran ahead): its
 * lease is judged against its partition's time now, and its submission time is brought back
 * to store time by the lead, so a lease does not show as running up to the lead longer, nor a
 * wait as that much shorter.
 *
 * No background reader: each request first reads every partition from where the fold stopped
 * to the partition's end at that moment (`catchUp`), so the answer covers everything the log
 * held when the request came, and a server nobody asks never reads its log twice. Passes run
 * one after another (a request arriving during a pass waits for the next one). The first
 * request reads the whole retained log once, as opening the queue did.
 *
 * Its own fold rather than the shipped agentOutcomes projection: that one sums every tenant
 * (a scoped token must see only its own) and keeps neither the open entries nor counts by time.
 */
import { decodeEvent } from '../events/codec.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';

export const MINUTE_MS = 60_000;
/** How far back the per-minute counts go: a day. */
export const KEPT_MINUTES = 1440;

export const COUNTS = ['submitted', 'started', 'retried', 'succeeded', 'failed', 'cancelled', 'expired', 'threadDeleted'] as const;
export type Counts = Record<(typeof COUNTS)[number], number>;

/** One agent's backlog now and its counts over the window asked for. */
export interface AgentRow extends Counts {
  agent: string;
  /** Open entries. */
  open: number;
  /** Open entries a lease holds now (by their partition's time). */
  running: number;
  /** Open entries no current lease holds (queued, delayed, or waiting for a retry). */
  waiting: number;
  /** The submission time of the oldest waiting entry, in store time; null when none waits. */
  oldestWaitingAt: number | null;
}

interface OpenEntry {
  key: string;
  partition: number;
  submittedAt: number;
  leasedUntil: number | null;
}

interface Group {
  tenant: string;
  agent: string;
  /** Counts by minute (epoch ms / MINUTE_MS). */
  minutes: Map<number, Counts>;
}

export class AgentBacklog {
  readonly #log: EventLog;
  readonly #next: bigint[];
  readonly #open = new Map<string, OpenEntry>();
  readonly #groups = new Map<string, Group>();
  #pass: Promise<void> = Promise.resolve();

  constructor(log: EventLog) {
    this.#log = log;
    this.#next = Array.from({ length: log.partitions }, () => 0n);
  }

  /** Folds what the log holds now (see the header: one pass at a time). */
  catchUp(): Promise<void> {
    const pass = this.#pass.then(() => this.#readToEnd());
    this.#pass = pass.catch(() => undefined);
    return pass;
  }

  /**
   * The rows of the agents of `tenants` (a filter; 'all': every tenant), counts over the last
   * `minutes` minutes up to `now` (store time); `partitionNow` answers a partition's time now.
   */
  rows(tenants: (tenant: string) => boolean, now: number, minutes: number, partitionNow: (partition: number) => number): AgentRow[] {
    const nowMinute = Math.floor(now / MINUTE_MS);
    const rows = new Map<string, AgentRow>();
    const rowOf = (agent: string): AgentRow => {
      let row = rows.get(agent);
      if (row === undefined) rows.set(agent, (row = { agent, open: 0, running: 0, waiting: 0, oldestWaitingAt: null, ...zero() }));
      return row;
    };
    for (const group of this.#groups.values()) {
      forget(group.minutes, nowMinute - KEPT_MINUTES);
      if (!tenants(group.tenant)) continue;
      const row = rowOf(group.agent);
      for (const [minute, counts] of group.minutes) if (minute > nowMinute - minutes) add(row, counts);
    }
    const leads = new Map<number, number>();
    const leadOf = (partition: number): number => {
      let lead = leads.get(partition);
      if (lead === undefined) leads.set(partition, (lead = partitionNow(partition) - now));
      return lead;
    };
    for (const entry of this.#open.values()) {
      const group = this.#groups.get(entry.key)!;
      if (!tenants(group.tenant)) continue;
      const row = rowOf(group.agent);
      row.open++;
      const lead = leadOf(entry.partition);
      if (entry.leasedUntil !== null && entry.leasedUntil > now + lead) row.running++;
      else {
        row.waiting++;
        row.oldestWaitingAt = Math.min(row.oldestWaitingAt ?? Infinity, entry.submittedAt - lead);
      }
    }
    return [...rows.values()].sort((a, b) => a.agent.localeCompare(b.agent));
  }

  async #readToEnd(): Promise<void> {
    for (let partition = 0; partition < this.#log.partitions; partition++) {
      for await (const record of this.#log.read(partition, this.#next[partition]!)) {
        if (record.value !== null) this.#apply(decodeEvent(record.value), partition);
        this.#next[partition] = record.offset + 1n;
      }
    }
  }

  #apply(event: RunlogEvent, partition: number): void {
    if (event.type === 'Submitted') {
      const key = JSON.stringify([event.tenant, event.agent]);
      if (!this.#groups.has(key)) this.#groups.set(key, { tenant: event.tenant, agent: event.agent, minutes: new Map() });
      this.#open.set(event.entryId, { key, partition, submittedAt: event.at, leasedUntil: null });
      this.#count(key, event.at, 'submitted');
      return;
    }
    if (event.entryId === null) return;
    const entry = this.#open.get(event.entryId);
    if (entry === undefined) return; // closed already, or its submission compacted away
    switch (event.type) {
      case 'Leased':
      case 'LeaseExtended':
        entry.leasedUntil = event.expiresAt;
        return;
      case 'AttemptStarted':
        return this.#count(entry.key, event.at, 'started');
      case 'Yielded':
        entry.leasedUntil = null;
        if (event.kind === 'retry') this.#count(entry.key, event.at, 'retried');
        return;
      // Three events close an entry, as in the queue's fold (projections/partition-view.ts CLOSING_TYPES).
      case 'Closed':
        return this.#close(event.entryId, entry, event.at, event.outcome);
      case 'CancelRequested':
        return this.#close(event.entryId, entry, event.at, 'cancelled');
      case 'ThreadDeleted':
        return this.#close(event.entryId, entry, event.at, 'threadDeleted');
    }
  }

  #close(entryId: string, entry: OpenEntry, at: number, outcome: keyof Counts): void {
    this.#open.delete(entryId);
    this.#count(entry.key, at, outcome);
  }

  #count(key: string, at: number, name: keyof Counts): void {
    const minutes = this.#groups.get(key)!.minutes;
    const minute = Math.floor(at / MINUTE_MS);
    let counts = minutes.get(minute);
    if (counts === undefined) minutes.set(minute, (counts = zero()));
    counts[name]++;
  }
}

function zero(): Counts {
  return { submitted: 0, started: 0, retried: 0, succeeded: 0, failed: 0, cancelled: 0, expired: 0, threadDeleted: 0 };
}

function add(row: Counts, counts: Counts): void {
  for (const name of COUNTS) row[name] += counts[name];
}

/** Drops the minutes before `oldest`. */
function forget(minutes: Map<number, Counts>, oldest: number): void {
  for (const minute of minutes.keys()) if (minute < oldest) minutes.delete(minute);
}
