/**
 * The nodes a cluster's client talks to: one NodeQueue per node (its own keep-alive
 * connections, the one token, the one server clock; no retries of its own: the cluster
 * retries, choosing the node again by its map). A node is opened when the map (or a NotOwner)
 * first names it, and let go once the map no longer does: its work stream closes at once, and
 * its connections after `lingerMs` (the longest a call on it can still be in flight), so a
 * call under way on a node that left still gets its answer.
 *
 * onWork over a cluster is the union of every node's work stream (GET /v1/work): each
 * node's signal says an entry of a partition it serves became takeable, and the listeners
 * (a Worker's waker) then take across the nodes. The first listener opens every node's
 * stream, and a node that joins later gets one at once. A stream's opening calls the
 * listeners once (work-signal.ts), as does a change of the map (wake()): work on a partition
 * that moved was signalled by a node the client may not have been listening to.
 */
import { RunlogError } from '../errors.ts';
import { WorkListeners } from '../queue/work-listeners.ts';
import type { RunlogWarning } from '../warnings.ts';
import type { NodeQueue } from './node-queue.ts';

export class ClusterNodes {
  readonly #nodes = new Map<string, NodeQueue>();
  readonly #retired = new Set<NodeQueue>();
  readonly #listeners: WorkListeners;
  #listening = false;
  #stopped = false;
  /** Nodes whose work stream signalled since signalled() was last asked. */
  #signalled = new Set<string>();

  constructor(
    private readonly open: (url: string) => NodeQueue,
    warn: (warning: RunlogWarning) => void,
    private readonly lingerMs: number,
  ) {
    this.#listeners = new WorkListeners(warn);
  }

  /** The client of the node at `url` (a URL.href), opened now if it was not. */
  get(url: string): NodeQueue {
    if (this.#stopped) throw new RunlogError('Stopped', 'the client was stopped');
    let node = this.#nodes.get(url);
    if (node === undefined) {
      node = this.open(url);
      this.#nodes.set(url, node);
      if (this.#listening) this.#listen(node);
    }
    return node;
  }

  /** Follows the map: opens the nodes it names and lets go of the others. */
  follow(urls: readonly string[]): void {
    const named = new Set(urls);
    for (const url of named) this.get(url);
    for (const [url, node] of this.#nodes) {
      if (named.has(url)) continue;
      this.#nodes.delete(url);
      this.#retire(node);
    }
  }

  /** The union of the nodes' work signals (see the top). */
  onWork(listener: () => void): () => void {
    const remove = this.#listeners.add(listener);
    if (!this.#listening) {
      this.#listening = true;
      for (const node of this.#nodes.values()) this.#listen(node);
    }
    return remove;
  }

  /** The nodes that signalled work since the last call (a take asks them first: the work is likely theirs). */
  signalled(): string[] {
    const nodes = [...this.#signalled];
    this.#signalled.clear();
    return nodes;
  }

  /** Calls the work listeners (the map changed: a partition's work may have been signalled where the client did not listen). */
  wake(): void {
    this.#listeners.notify();
  }

  /** Stops every node's client (their calls in flight end Stopped). */
  async stop(): Promise<void> {
    this.#stopped = true;
    const nodes = [...this.#nodes.values(), ...this.#retired];
    this.#nodes.clear();
    this.#retired.clear();
    await Promise.all(nodes.map((node) => node.stop()));
  }

  #listen(node: NodeQueue): void {
    node.onWork(() => {
      this.#signalled.add(node.url);
      this.#listeners.notify();
    });
  }

  #retire(node: NodeQueue): void {
    node.stopWork();
    this.#retired.add(node);
    const timer = setTimeout(() => {
      if (this.#retired.delete(node)) void node.stop();
    }, this.lingerMs);
    timer.unref();
  }
}
