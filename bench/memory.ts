/**
 * Memory per open entry: submit `count` entries with small inputs (10 per thread) and
 * measure heapUsed and RSS before and after, each after forced GC (node --expose-gc).
 * Per entry = delta / count - input bytes.
 */
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { LogSite } from './logs.ts';
import { AGENT, PARTITIONS, TENANT } from './throughput.ts';

export interface MemoryPerEntry {
  entries: number;
  inputBytes: number;
  heapPerEntry: number;
  rssPerEntry: number;
  /** Off-heap ArrayBuffer memory per entry (input bytes live there). */
  arrayBuffersPerEntry: number;
  /** The V8 heap's size (used and free) per entry. */
  heapTotalPerEntry: number;
  gcForced: boolean;
}

const CALLERS = 64;
const PER_THREAD = 10;

export async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage();
}

export async function memoryPerEntry(site: LogSite, count: number): Promise<MemoryPerEntry> {
  const input = '{"n":1234567890}'; // 16 bytes, like every input below
  const queue = await openRunQueue({ log: site.config, partitions: PARTITIONS });
  try {
    await queue.submit({ tenant: TENANT, thread: 'warm-up', agent: AGENT, input });
    const before = await settledMemory();
    let next = 0;
    const caller = async (): Promise<void> => {
      for (let n = next++; n < count; n = next++) {
        await queue.submit({
          tenant: TENANT,
          thread: `mem-${Math.floor(n / PER_THREAD)}`,
          agent: AGENT,
          input: `{"n":${String(n).padStart(10, '0')}}`,
        });
      }
    };
    await Promise.all(Array.from({ length: CALLERS }, caller));
    const after = await settledMemory();
    const open = (await queue.metrics()).open - 1;
    if (open !== count) throw new Error(`expected ${count} open entries, found ${open}`);
    return {
      entries: count,
      inputBytes: input.length,
      heapPerEntry: (after.heapUsed - before.heapUsed) / count - input.length,
      rssPerEntry: (after.rss - before.rss) / count - input.length,
      arrayBuffersPerEntry: (after.arrayBuffers - before.arrayBuffers) / count,
      heapTotalPerEntry: (after.heapTotal - before.heapTotal) / count,
      gcForced: typeof (globalThis as { gc?: unknown }).gc === 'function',
    };
  } finally {
    await queue.stop();
  }
}
