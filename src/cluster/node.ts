/**
 * A cluster node: its membership of the Kafka consumer group, and its queue (ownership
 * 'assigned') serving the partitions the group gives it.
 *
 * Each generation's assignment is reconciled against what the queue does: a partition this
 * node should own and does not serve is acquired (claim, fencing the previous writer, then
 * replay); one it should not own and still holds is released. All at once, in parallel: the
 * queue runs one partition's acquire and release one after the other, and a partition that
 * stays put is never touched, so it serves straight through the rebalance. An acquire that
 * fails is tried again (with backoff) for as long as the partition is still this node's. The
 * reconcile looks at the queue's modes, not at the last assignment: a partition the queue let
 * go on its own (Fenced: another node claimed it) is acquired again if a later generation
 * still names this node its owner, or (#recheck) once a whole session timeout has passed with
 * the group still naming this node: a rebalance that moved it would have reached this node by
 * then, so the claim was a stale writer's (one that had not yet learned it lost the partition),
 * and without this nobody would serve the partition until the next rebalance.
 *
 * Safety does not come from here but from fencing (CLUSTER.md): a node that learns late that
 * it lost a partition has its appends fenced by the new owner's claim. What the node adds is
 * the guard: while its membership is not known alive (no heartbeat proved it within a session
 * timeout: a GC pause, a SIGSTOP, a broker out of reach), every call is refused with NotOwner,
 * so it never answers from a view the new owner may have moved past. Its membership lost,
 * it releases everything.
 *
 * Stopping: leave the group first (the others rebalance at once instead of after a session
 * timeout), then release every partition (commands get NotOwner, appends in flight settle);
 * the caller then stops the queue.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { RunlogError } from '../errors.ts';
import { joinGroup, type GroupAssignment, type GroupMembership } from '../log/kafka/group-membership.ts';
import { Backoff } from '../retry.ts';
import { describe } from '../validation/index.ts';
import type { AssignableQueue, ClusterLogger, ClusterMap, NodeAddress, PartitionWork } from './types.ts';
import { UnservedClock } from './unserved-clock.ts';

export interface ClusterNodeOptions {
  queue: AssignableQueue;
  brokers: string[];
  clientId?: string;
  /** The events topic the queue's log is on. */
  topic: string;
  group: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs?: number;
  logger: ClusterLogger;
  /** Started per partition once it serves, stopped before it is released (the command intake). */
  work?: PartitionWork;
  /** This node's id in the group; default hostname-pid-random. */
  nodeId?: string;
  /** Monotonic ms, for the unserved times; default performance.now. */
  monotonicNow?: () => number;
}

type Modes = readonly string[];

export class ClusterNode {
  readonly #options: ClusterNodeOptions;
  readonly #queue: AssignableQueue;
  readonly #unserved: UnservedClock;
  readonly #self: NodeAddress;
  readonly #stopping = new AbortController();
  #membership: GroupMembership | null = null;
  #assignment: GroupAssignment | null = null;
  /** Partitions with an acquire loop under way (at most one each). */
  readonly #acquiring = new Set<number>();
  /** Partitions whose work (options.work) was started and not stopped. */
  readonly #working = new Set<number>();
  #stopped: Promise<void> | null = null;
  /** Partitions of this node's assignment that the queue does not serve, since when (monotonic ms): see #recheck. */
  readonly #straySince = new Map<number, number>();
  #recheckTimer: NodeJS.Timeout | null = null;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.#queue = options.queue;
    const now = options.monotonicNow ?? (() => performance.now());
    this.#unserved = new UnservedClock(now);
    this.#self = { node: options.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`, url: '' };
    this.#queue.setOwnerDirectory((partition) => this.#ownerOf(partition));
    this.#queue.setGuard(() => this.#refusal());
  }

  get self(): NodeAddress {
    return { ...this.#self };
  }

  /** Joins the group advertising `url`; resolves once the first generation's assignment is being served (or acquired). */
  async start(url: string): Promise<void> {
    this.#self.url = url;
    const { brokers, topic, group, sessionTimeoutMs } = this.#options;
    const startedAt = performance.now();
    this.#membership = await joinGroup({
      brokers,
      topic,
      group,
      self: this.self,
      sessionTimeoutMs,
      heartbeatIntervalMs: this.#options.heartbeatIntervalMs ?? Math.min(1_000, Math.floor(sessionTimeoutMs / 3)),
      ...(this.#options.clientId === undefined ? {} : { clientId: this.#options.clientId }),
      onAssignment: (assignment) => this.#reconcile(assignment),
      onLost: (error) => this.#lost(error),
    });
    this.#log('info', 'cluster.joined', { group, node: this.#self.node, url, tookMs: Math.round(performance.now() - startedAt) });
    this.#recheckTimer = setInterval(() => void this.#recheck(), Math.max(250, Math.floor(sessionTimeoutMs / 4)));
    this.#recheckTimer.unref();
  }

  /**
   * A partition this node's assignment names but the queue let go on its own (a stale writer
   * fenced it) and no generation has changed for a whole session timeout since: acquired
   * again, fencing that writer (see the top).
   */
  async #recheck(): Promise<void> {
    const assignment = this.#assignment;
    if (assignment === null || this.#stopping.signal.aborted || this.#membership?.alive() !== true) return this.#straySince.clear();
    const health = await this.#queue.health();
    const now = performance.now();
    for (const { partition, mode } of health) {
      const stray = assignment.mine.includes(partition) && !SERVES.includes(mode) && !this.#acquiring.has(partition);
      const since = this.#straySince.get(partition);
      if (!stray) this.#straySince.delete(partition);
      else if (since === undefined) this.#straySince.set(partition, now);
      else if (now - since >= this.#options.sessionTimeoutMs && this.#assignment === assignment) {
        this.#straySince.delete(partition);
        this.#log('warn', 'cluster.partition.reclaimed', {
          partition,
          generation: assignment.generation,
          strayMs: Math.round(now - since),
        });
        this.#unserved.mark(partition);
        void this.#acquire(partition);
      }
    }
  }

  /** Leaves the group, then releases every partition (see the top). The caller stops the queue after. */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  /** GET /v1/cluster. */
  async describe(): Promise<ClusterMap> {
    const assignment = this.#assignment;
    const partitions = this.#queue.partitions;
    return {
      group: this.#options.group,
      generation: assignment?.generation ?? 0,
      partitions,
      self: this.self,
      members: assignment?.members.map((member) => ({ ...member })) ?? [],
      owners: Array.from({ length: partitions }, (_, p) => assignment?.owners[p]?.url ?? null),
    };
  }

  /** /readyz: joined, alive, and every partition of this node's assignment serves. */
  async ready(): Promise<boolean> {
    const assignment = this.#assignment;
    if (assignment === null || this.#membership?.alive() !== true) return false;
    const health = await this.#queue.health();
    return assignment.mine.every((partition) => health[partition]?.mode === 'serving');
  }

  #reconcile(assignment: GroupAssignment): void {
    if (this.#stopping.signal.aborted) return;
    const previous = this.#assignment;
    this.#assignment = assignment;
    const receivedAt = performance.now();
    void this.#queue.health().then(async (health) => {
      const actions: Promise<void>[] = [];
      const gained: number[] = [];
      const lost: number[] = [];
      for (const { partition, mode } of health) {
        const mine = assignment.mine.includes(partition);
        const movedHere = previous?.owners[partition]?.node !== this.#self.node;
        if (mine && (movedHere || mode !== 'serving')) this.#unserved.mark(partition);
        if (!mine) this.#unserved.forget(partition);
        if (mine && !SERVES.includes(mode) && !this.#acquiring.has(partition)) {
          gained.push(partition);
          actions.push(this.#acquire(partition));
        } else if (!mine && !UNOWNED.includes(mode)) {
          lost.push(partition);
          actions.push(this.#release(partition));
        }
      }
      await Promise.all(actions);
      const { generation, mine, members } = assignment;
      const tookMs = Math.round(performance.now() - receivedAt);
      this.#log('info', 'cluster.assignment', { generation, mine, gained, lost, members: members.length, tookMs });
    });
  }

  /** Acquires the partition, trying again while it is still this node's; logs how long it went unserved once it serves. */
  async #acquire(partition: number): Promise<void> {
    this.#acquiring.add(partition);
    const backoff = new Backoff({ firstMs: 200, maxMs: 5_000, signal: this.#stopping.signal });
    try {
      while (this.#wants(partition)) {
        try {
          await this.#stopWork(partition); // left from before a fencing, if any
          if ((await this.#queue.health())[partition]?.mode === 'down') await this.#queue.release(partition);
          await this.#queue.acquire(partition);
          break;
        } catch (error) {
          this.#log('warn', 'cluster.acquire.failed', { partition, error });
          await backoff.after(error);
        }
      }
    } catch {
      return; // stopping
    } finally {
      this.#acquiring.delete(partition);
    }
    if (!this.#wants(partition)) return; // a later generation moved it: that one releases it
    const unservedMs = this.#unserved.served(partition);
    this.#log('info', 'cluster.partition.serving', { partition, generation: this.#assignment?.generation, unservedMs });
    this.#startWork(partition);
  }

  /** `unserved`: the partition may come back to this node (its membership lost), so it is unserved from now; a revoked one is another node's to measure. */
  async #release(partition: number, unserved = false): Promise<void> {
    if (unserved) this.#unserved.mark(partition);
    await this.#stopWork(partition);
    try {
      await this.#queue.release(partition);
    } catch (error) {
      this.#log('warn', 'cluster.release.failed', { partition, error });
    }
  }

  #lost(error: RunlogError): void {
    this.#log('warn', 'cluster.lost', { group: this.#options.group, error });
    this.#assignment = null;
    void this.#releaseAll(true);
  }

  async #releaseAll(unserved = false): Promise<void> {
    const health = await this.#queue.health();
    await Promise.all(health.filter(({ mode }) => !UNOWNED.includes(mode)).map(({ partition }) => this.#release(partition, unserved)));
  }

  async #stop(): Promise<void> {
    this.#stopping.abort();
    if (this.#recheckTimer !== null) clearInterval(this.#recheckTimer);
    try {
      await this.#membership?.leave();
    } finally {
      this.#assignment = null;
      await this.#releaseAll();
      await this.#options.work?.close?.().catch((error: unknown) => this.#log('error', 'cluster.work.failed', { error }));
      if (this.#membership !== null) this.#log('info', 'cluster.left', { group: this.#options.group, node: this.#self.node });
    }
  }

  #wants(partition: number): boolean {
    return !this.#stopping.signal.aborted && this.#assignment?.mine.includes(partition) === true;
  }

  #startWork(partition: number): void {
    const work = this.#options.work;
    if (work === undefined || this.#working.has(partition)) return;
    this.#working.add(partition);
    try {
      work.start(partition);
    } catch (error) {
      this.#log('error', 'cluster.work.failed', { partition, error });
    }
  }

  async #stopWork(partition: number): Promise<void> {
    if (!this.#working.delete(partition)) return;
    try {
      await this.#options.work!.stop(partition);
    } catch (error) {
      this.#log('error', 'cluster.work.failed', { partition, error });
    }
  }

  /** A partition's owner for NotOwner answers: another node's URL, or null (unknown, or this node, which does not serve it now). */
  #ownerOf(partition: number): string | null {
    const owner = this.#assignment?.owners[partition] ?? null;
    return owner === null || owner.node === this.#self.node ? null : owner.url;
  }

  /** The guard: every call is refused while this node's membership is not known alive. */
  #refusal(): RunlogError | null {
    if (this.#membership?.alive() === true) return null;
    const group = describe(this.#options.group);
    const why = this.#stopping.signal.aborted
      ? 'it is leaving'
      : this.#membership === null
        ? 'it has not joined yet'
        : `no heartbeat proved its membership within the session timeout (${this.#options.sessionTimeoutMs} ms)`;
    return new RunlogError('NotOwner', `this node serves nothing of group ${group} now: ${why}`);
  }

  #log(level: 'info' | 'warn' | 'error', event: string, fields: Record<string, unknown>): void {
    this.#options.logger.log(level, event, fields);
  }
}

/** Modes in which the queue serves the partition or is on its way to (nothing to acquire). */
const SERVES: Modes = ['serving', 'acquiring', 'draining', 'rebuilding'];
/** Modes in which the queue holds nothing of the partition (nothing to release). */
const UNOWNED: Modes = ['unowned', 'stopped'];
