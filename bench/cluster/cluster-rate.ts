/**
 * `npm run bench -- --log kafka --nodes 1,2,3`: aggregate lifecycles/s of a runlog cluster on
 * the one broker, for each node count. Each count gets a fresh topic of `partitions`
 * partitions and that many `runlog serve --group` child processes (nodes.ts; one group per
 * run, the single node too, so every count runs the same code); once every node listens,
 * this process's callers run throughput.ts's lifecycle (submit, take, startAttempt, close)
 * through the client, which routes each call to its partition's owner. A warm-up window
 * first (the nodes' JITs and connections), then the timed window; then the nodes stop.
 *
 * What it measures on one machine: nodes, broker and callers share its cores, so more nodes
 * add processes, not CPU. The figure says what spreading partitions over processes costs or
 * gains here, not what more machines would give (the README says what to expect there).
 */
import { randomUUID } from 'node:crypto';
import { connect } from '../../src/client/index.ts';
import { isRunlogError } from '../../src/errors.ts';
import { concurrently, lifecycle, type Rate } from '../throughput.ts';
import { serveHasGroups, startNodes } from './nodes.ts';
import { settle } from './settle.ts';

export interface ClusterRate extends Rate {
  nodes: number;
  /** Lifecycles cut short by a retriable refusal or a lost answer (a rebalance, a node's trouble), and the first few. */
  failed: number;
  failures: string[];
  /** The generation at the start and end of the timed window (they differ if the group rebalanced meanwhile). */
  generations: [number, number];
  partitions: number;
  /** Whether the nodes ran in cluster mode (`--group`): false for a single node of a runlog without it. */
  grouped: boolean;
}

export interface ClusterRun {
  brokers: readonly string[];
  partitions: number;
  callers: number;
  durationMs: number;
  warmupMs: number;
  progress: (message: string) => void;
}

export async function clusterLifecycleRate(nodeCount: number, run: ClusterRun): Promise<ClusterRate> {
  const id = randomUUID().slice(0, 8);
  const spec = { brokers: run.brokers, topic: `runlog-bench-cluster-${nodeCount}-${id}`, partitions: run.partitions };
  const grouped = await serveHasGroups();
  if (!grouped && nodeCount > 1)
    throw new Error(`--nodes ${nodeCount}: this runlog serve has no --group (cluster mode), so only one node can serve a topic`);
  const group = grouped ? { group: `runlog-bench-cluster-${id}` } : {};
  const nodes = await startNodes(nodeCount, { ...spec, ...group });
  try {
    const settled = await settle(nodes, 120_000);
    run.progress(
      `cluster: ${nodeCount} node(s) serving (partitions owned ${JSON.stringify(settled.owned)}); ${run.callers} callers through the client for ${run.durationMs} ms`,
    );
    const client = await connect({ url: nodes.map((node) => node.url), onWarning: () => {} });
    const failures: string[] = [];
    let failed = 0;
    /** One lifecycle; one that a retriable failure cuts short is counted, not fatal: the caller goes on with the next. */
    const loop = (offset: number) => async (caller: number, n: number) => {
      try {
        await lifecycle(client, caller, n + offset);
      } catch (error) {
        if (!isRunlogError(error) || !error.retriable) throw error;
        failed++;
        if (failures.length < 5) failures.push(`${error.code}: ${error.message}`);
      }
    };
    try {
      await concurrently(run.callers, run.warmupMs, loop(0));
      failed = 0;
      const rate = await concurrently(run.callers, run.durationMs, loop(1_000_000_000));
      const after = await settle(nodes, 120_000);
      const crashes = nodes.flatMap((node) => node.crashes);
      if (crashes.length > 0) throw new Error(`a node crashed during the run:\n${crashes.join('\n')}`);
      const generations: [number, number] = [settled.generation, after.generation];
      const count = rate.count - failed; // concurrently counted the cut-short ones too
      return {
        ...rate,
        count,
        perSecond: count / rate.seconds,
        nodes: nodeCount,
        partitions: run.partitions,
        grouped,
        failed,
        failures,
        generations,
      };
    } finally {
      await client.stop();
    }
  } finally {
    await Promise.all(nodes.map((node) => node.stop()));
  }
}

/** Parses `--nodes 1,2,3`: node counts, each a whole number from 1 to 16. */
export function parseNodeCounts(text: string): number[] {
  const counts = text.split(',').map((part) => Number(part.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) {
    throw new Error(`--nodes must be a comma-separated list of node counts from 1 to 16, e.g. 1,2,3; got ${text}`);
  }
  return counts;
}
