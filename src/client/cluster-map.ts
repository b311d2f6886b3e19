/**
 * A cluster client's map of who serves which partition: the answer of GET /v1/cluster
 * (CLUSTER.md), checked, its urls in one spelling (URL.href) so a node is one node however
 * its address was written. A node's map is of one group generation: a later read replaces
 * the map only if it is of the same group and partition count and no older generation, so
 * a node that lags (it has not seen the last rebalance yet) does not undo what a newer one
 * said. Unless no node has answered this generation for `staleMs`: a group that emptied (every
 * node stopped) starts its generations again from 1, and its new maps must not be refused
 * for good. Between reads, a NotOwner that names the owner corrects that one partition (hint).
 */
import { RunlogError } from '../errors.ts';
import { describe } from '../validation/index.ts';
import { ClusterAnswer, compileCheck } from '../wire/index.ts';

const checkAnswer = compileCheck(ClusterAnswer, 'cluster map');

export interface ClusterState {
  /** The consumer group; null: a single server (it owns every partition). */
  group: string | null;
  generation: number;
  partitions: number;
  /** Per partition, its owner's base url (URL.href), or null while the group has not assigned it. */
  owners: (string | null)[];
  /** Every member's base url (URL.href). */
  members: string[];
}

/** The answer of `url`'s GET /v1/cluster, checked: a map that is none is LogUnavailable naming the server (it is not the caller's fault). */
export function clusterState(answer: unknown, url: string): ClusterState {
  let checked: ClusterAnswer;
  try {
    checked = checkAnswer(answer);
    if (checked.owners.length !== checked.partitions)
      throw new Error(`${checked.owners.length} owners for ${checked.partitions} partitions`);
  } catch (error) {
    throw new RunlogError('LogUnavailable', `the runlog server at ${url} answered a cluster map that is not one: ${describe(error)}`, {
      retriable: true,
    });
  }
  const spell = (address: string): string => {
    const href = nodeUrl(address);
    if (href === null)
      throw new RunlogError('LogUnavailable', `the runlog server at ${url} names a node at ${describe(address)}, not a url`);
    return href;
  };
  const owners = checked.owners.map((owner) => (owner === null ? null : spell(owner)));
  return {
    group: checked.group,
    generation: checked.generation,
    partitions: checked.partitions,
    owners,
    members: checked.members.map((m) => spell(m.url)),
  };
}

/** A node's base url in one spelling, or null for what is no http(s) url. */
export function nodeUrl(address: string): string | null {
  if (!URL.canParse(address)) return null;
  const url = new URL(address);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}

export interface Staleness {
  /** A monotonic clock, ms. */
  clock: () => number;
  /** How long without an answer of this generation before an older one is taken. */
  staleMs: number;
}

export class ClusterMap {
  #state: ClusterState;
  /** When a node last answered this generation (or a newer one), by `staleness.clock`. */
  #confirmedAt: number;

  constructor(
    state: ClusterState,
    private readonly staleness: Staleness,
  ) {
    this.#state = { ...state, owners: [...state.owners] };
    this.#confirmedAt = staleness.clock();
  }

  get group(): string | null {
    return this.#state.group;
  }

  get generation(): number {
    return this.#state.generation;
  }

  get partitions(): number {
    return this.#state.partitions;
  }

  ownerOf(partition: number): string | null {
    return this.#state.owners[partition] ?? null;
  }

  /** A NotOwner named `owner` for `partition`: route there until the next read says otherwise. */
  hint(partition: number, owner: string): void {
    this.#state.owners[partition] = owner;
  }

  /** Takes a map read from a node, unless it is of another group or partition count, or older (see the top); answers whether it was taken. */
  accept(state: ClusterState): boolean {
    const current = this.#state;
    const now = this.staleness.clock();
    if (state.group !== current.group || state.partitions !== current.partitions) return false;
    if (state.generation < current.generation && now - this.#confirmedAt < this.staleness.staleMs) return false;
    this.#state = { ...state, owners: [...state.owners] };
    this.#confirmedAt = now;
    return true;
  }

  /** Each partition's owner, in partition order. */
  ownersByPartition(): (string | null)[] {
    return [...this.#state.owners];
  }

  /** The distinct nodes that own a partition now, in partition order. */
  owners(): string[] {
    return [...new Set(this.#state.owners.filter((owner) => owner !== null))];
  }

  /** Every node the map names: the members and the owners. */
  nodes(): string[] {
    return [...new Set([...this.#state.members, ...this.owners()])];
  }
}
