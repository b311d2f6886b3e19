/**
 * The garbage collector's own account of a window (v8.GCProfiler): its scavenges (count,
 * pause, and the bytes each moved into the old generation) and its full collections. What a
 * latency tail most often comes from: garbage that is promoted, dies in the old generation and
 * brings on full collections (src/plain-objects.ts, src/churn-map.ts).
 */
import { GCProfiler } from 'node:v8';

export interface GcAccount {
  scavenges: number;
  scavengeMs: number;
  /** Bytes the scavenges moved into the old generation, all told. */
  promoted: number;
  fullCollections: number;
}

interface GcStatistic {
  gcType: string;
  cost: number;
  beforeGC: { heapSpaceStatistics: Array<{ spaceName: string; spaceUsedSize: number }> };
  afterGC: { heapSpaceStatistics: Array<{ spaceName: string; spaceUsedSize: number }> };
}

/** Starts counting; stop() answers the account of the collections since. */
export function startGcAccount(): { stop(): GcAccount } {
  const profiler = new GCProfiler();
  profiler.start();
  return {
    stop() {
      const account: GcAccount = { scavenges: 0, scavengeMs: 0, promoted: 0, fullCollections: 0 };
      const statistics = (profiler.stop()?.statistics ?? []) as GcStatistic[];
      for (const gc of statistics) {
        if (gc.gcType === 'Scavenge') {
          account.scavenges++;
          account.scavengeMs += gc.cost / 1000;
          account.promoted += oldSpaceUsed(gc.afterGC.heapSpaceStatistics) - oldSpaceUsed(gc.beforeGC.heapSpaceStatistics);
        } else if (gc.gcType === 'MarkSweepCompact') account.fullCollections++;
      }
      return account;
    },
  };
}

function oldSpaceUsed(spaces: ReadonlyArray<{ spaceName: string; spaceUsedSize: number }>): number {
  return spaces.find((space) => space.spaceName === 'old_space')?.spaceUsedSize ?? 0;
}
