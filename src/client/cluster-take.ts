/**
 * take over a cluster: each node leases only from the partitions it serves, so a take asks
 * the nodes in turn.
 *
 * A round: a take that does not wait on each node that owns a partition, first those whose
 * work stream signalled since the last round (the work is likely theirs), then starting at
 * the next node each round (so no node's entries are always asked for last), until one answers
 * a lease: the first lease wins, and no other node is asked, so one call never holds two
 * leases. A node that refused without doing anything (NotOwner, Stopped, a connection
 * refused: retry-policy.ts's wasRefused) is passed over and the map read again. Any other
 * failure ends the round with that error: the take may have leased there (its answer was
 * lost), and taking elsewhere would hold a second lease; the caller decides (a Worker tries
 * again after its pause, the lost lease runs out). A round in which no node answered at all
 * fails with the last refusal.
 *
 * A take with a wait does not long-poll one node (the others' entries would wait) nor all at
 * once (two could lease). It listens to the union of the nodes' work signals
 * (cluster-nodes.ts) and runs rounds through src/wire/take-waiting.ts, as the server's long-poll
 * runs takes: listen, take a round; if nothing, wait for the first of a work signal from any
 * node, the store-clock time the earliest entry falls due on any node (nextDueAt, the minimum
 * over the nodes), the end of the wait, the caller's signal or the client's stop; again.
 * A work signal reaches the client in one stream message, so an entry submitted on any node
 * is taken about one message and one round after it became takeable.
 */
import type { Started, Taken } from '../queue/types.ts';
import { takeCall, type Call, type TakeParts } from './calls.ts';
import type { NodeQueue } from './node-queue.ts';
import { wasRefused } from './retry-policy.ts';
import { takeWaiting } from '../wire/take-waiting.ts';

export interface TakeHost {
  /** The nodes that own a partition now, by the map. */
  owners(): string[];
  /** The nodes whose work stream signalled since this was last asked. */
  signalled(): string[];
  node(url: string): NodeQueue;
  /** Reads the map again, in the background. */
  refreshSoon(): void;
  /** The union of the nodes' work signals. */
  onWork(listener: () => void): () => void;
  nextDueAt(agents: readonly string[], tenants?: readonly string[]): Promise<number | null>;
  now(): number;
  /** Throws Stopped once the client is stopped. */
  requireRunning(): void;
  /** Aborted by the client's stop. */
  readonly stopping: AbortSignal;
}

export class ClusterTake {
  #turn = 0;

  constructor(private readonly host: TakeHost) {}

  async take(parts: TakeParts): Promise<Taken | null> {
    return parts.waitMs === 0 ? this.#round(parts) : this.#waiting(parts);
  }

  /** One round of takeStarted calls (no wait): the first node that starts anything answers. */
  async takeStarted(call: Call<Started[]>): Promise<Started[]> {
    return (await this.#ask(call, (started) => started.length > 0)) ?? [];
  }

  async #round(parts: TakeParts): Promise<Taken | null> {
    return this.#ask(takeCall(parts, 0, parts.signal), (taken) => taken !== null);
  }

  /** Asks the nodes in the round's order until one answers something `found`; null when none did. */
  async #ask<T>(call: Call<T>, found: (answer: T) => boolean): Promise<T | null> {
    const owners = this.host.owners();
    if (owners.length === 0) this.host.refreshSoon();
    const start = this.#turn++ % Math.max(1, owners.length);
    const rotated = [...owners.slice(start), ...owners.slice(0, start)];
    const first = this.host.signalled().filter((node) => owners.includes(node));
    const order = [...first, ...rotated.filter((node) => !first.includes(node))];
    let answered = false;
    let refusal: unknown;
    for (const node of order) {
      try {
        const answer = await this.host.node(node).send(call);
        answered = true;
        if (found(answer)) return answer;
      } catch (error) {
        this.host.requireRunning();
        if (!wasRefused(error)) throw error;
        refusal = error;
        this.host.refreshSoon();
      }
    }
    if (!answered && refusal !== undefined) throw refusal;
    return null;
  }

  #waiting(parts: TakeParts): Promise<Taken | null> {
    const signal = parts.signal === undefined ? this.host.stopping : AbortSignal.any([this.host.stopping, parts.signal]);
    const source = {
      take: () => this.#round(parts),
      // A node that cannot tell (going away) makes it unknown: the wait then ends by a signal or its end, never by failing.
      nextDueAt: () => this.host.nextDueAt(parts.agents, parts.tenants).catch(() => null),
      now: () => this.host.now(),
      onWork: (listener: () => void) => this.host.onWork(listener),
      ended: () => {
        this.host.requireRunning();
        if (signal.aborted) throw signal.reason;
        return false;
      },
    };
    return takeWaiting(source, parts.waitMs, signal);
  }
}
