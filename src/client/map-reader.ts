/**
 * Keeps a cluster client's map fresh: reads it again every `everyMs`, and whenever a call was
 * refused (read(): awaited before the call is tried again; readSoon(): in the background).
 * One read at a time: callers during a read share it.
 *
 * A read asks every node of the map at once, not in turn: a node that hangs (paused, its
 * network gone) would hold a read in turn for the whole request timeout. It resolves with the
 * first map taken (or once every node failed: the map stays as it was), and takes later
 * answers too while they are no older (ClusterMap.accept). A node whose last read is still
 * unanswered is not asked again. A map taken makes the nodes follow it (new members opened,
 * gone ones let go), and one that moved a partition wakes the work listeners.
 */
import { clusterCall } from './calls.ts';
import { clusterState, type ClusterMap, type ClusterState } from './cluster-map.ts';
import type { ClusterNodes } from './cluster-nodes.ts';

export class MapReader {
  readonly #timer: NodeJS.Timeout;
  /** Nodes asked for their map and not answered yet. */
  readonly #asking = new Set<string>();
  #reading: Promise<void> | null = null;
  #stopped = false;

  constructor(
    private readonly map: ClusterMap,
    private readonly nodes: ClusterNodes,
    everyMs: number,
  ) {
    this.#timer = setInterval(() => this.readSoon(), everyMs);
    this.#timer.unref();
  }

  /** Reads the map again; never fails. */
  read(): Promise<void> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  readSoon(): void {
    if (!this.#stopped) void this.read();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }

  #read(): Promise<void> {
    const urls = this.map.nodes().filter((url) => !this.#asking.has(url));
    return new Promise((resolve) => {
      let left = urls.length;
      if (left === 0) return resolve();
      for (const url of urls) {
        this.#asking.add(url);
        this.nodes
          .get(url)
          .send(clusterCall)
          .then((answer) => clusterState(answer, url))
          .then(
            (state) => {
              if (this.#adopt(state)) resolve();
            },
            () => {}, // gone, shutting down, or no map: the others answer
          )
          .finally(() => {
            this.#asking.delete(url);
            if (--left === 0) resolve();
          });
      }
    });
  }

  /** Takes a map a node answered, unless it is older than this one (or of another group); answers whether it took it. */
  #adopt(state: ClusterState): boolean {
    if (this.#stopped) return false;
    const before = this.map.ownersByPartition().join();
    if (!this.map.accept(state)) return false;
    this.nodes.follow(this.map.nodes());
    if (this.map.ownersByPartition().join() !== before) this.nodes.wake();
    return true;
  }
}
