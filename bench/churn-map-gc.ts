/**
 * `node --import tsx bench/churn-map-gc.ts [--seconds 5] [--rounds 3]`
 *
 * What src/churn-map.ts is for, measured on two shapes of churn:
 *   - bursts: a Map that fills and empties (200 entries of short-lived objects set, then
 *     deleted, over and over, beside 20 that stay);
 *   - steady: 30 entries of ~1 KB, 10 new ones set and the 10 oldest deleted every millisecond
 *     (the open entries of a queue at 10,000 a second), no burst at all;
 * each as a plain Map and as a ChurnMap, with the same garbage made beside it. Prints, per
 * variant, the garbage collector's own account (v8.GCProfiler): the scavenges (count, pause,
 * and what each moved into the old generation) and the full collections, which come as often
 * as garbage is promoted. On this VM (2026-12-06): bursts, a Map 4.3-5.7 ms a scavenge and 11-24 full collections in 3 s, a
 * ChurnMap 1.4-1.6 ms and 1, doing more bursts in the same time. Steady (2026-12-07, 5 s): a
 * Map promoted 93-128 KB a scavenge (0.98-1.17 ms each; the chain starts once a table has been
 * promoted, a few seconds in), a ChurnMap copied every 2 x size sets 19 KB (0.61-0.69 ms).
 * Each run is a process of its own; rounds alternate the variants so all see the same
 * minutes of a shared machine. Not part of
 * `npm run bench`; tests assert none of it.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { ChurnMap } from '../src/churn-map.ts';
import { startGcAccount, type GcAccount } from './gc-account.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    // One measurement, in a process of its own (what the rounds spawn): a young generation
    // grown by one run would change the next one's scavenges.
    one: { type: 'string' },
  },
});
const run = promisify(execFile);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

interface Churnable {
  set(key: string, value: object): unknown;
  delete(key: string): boolean;
}

/** Runs `shape` through `map`, with the garbage collector's own account of each collection. */
async function measured(map: Churnable, shape: (map: Churnable) => Promise<void>): Promise<GcAccount> {
  const account = startGcAccount();
  await shape(map);
  return account.stop();
}

/** Bursts through `map` for `seconds`, yielding a turn between batches of bursts (as a server does). */
async function bursts(map: Churnable): Promise<void> {
  for (let n = 0; n < 20; n++) map.set(`stays-${n}`, { n });
  let id = 0;
  const ends = performance.now() + seconds * 1000;
  while (performance.now() < ends) {
    for (let burst = 0; burst < 20; burst++) {
      const keys: string[] = [];
      for (let n = 0; n < 200; n++) {
        const key = `k${id++}`;
        map.set(key, { values: new Array(8).fill(n), name: `${key}x`, at: n * 1.5 });
        keys.push(key);
      }
      for (const key of keys) map.delete(key);
      const garbage: object[] = [];
      for (let n = 0; n < 2000; n++) garbage.push({ n });
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

let sink: unknown = null;

/** 30 entries at all times, 10 set and the 10 oldest deleted every millisecond (a timer), with garbage beside. */
async function steady(map: Churnable): Promise<void> {
  const keys: string[] = [];
  let id = 0;
  let oldest = 0;
  const ends = performance.now() + seconds * 1000;
  while (performance.now() < ends) {
    for (let n = 0; n < 10; n++) {
      const key = `k${id++}`;
      map.set(key, { values: new Array(120).fill(n), name: `${key}x`, inner: { a: [1, 2, 3], s: `${key}-${n}` } });
      keys.push(key);
      if (keys.length - oldest > 30) map.delete(keys[oldest++]!);
      for (let g = 0; g < 40; g++) sink = new Array(32).fill(g);
    }
    if (oldest > 4096) {
      keys.splice(0, oldest);
      oldest = 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

const SHAPES = { bursts, steady };
const VARIANTS = { Map: () => new Map<string, object>(), ChurnMap: () => new ChurnMap<string, object>() };

/** Measures `shape` through `variant` here, and prints the figure as one line. */
async function measureOne(shape: keyof typeof SHAPES, variant: keyof typeof VARIANTS): Promise<void> {
  const figure = await measured(VARIANTS[variant](), SHAPES[shape]);
  const mean = figure.scavenges === 0 ? 0 : figure.scavengeMs / figure.scavenges;
  const promotedKb = figure.scavenges === 0 ? 0 : Math.round(figure.promoted / figure.scavenges / 1024);
  console.log(
    `${shape.padEnd(6)} ${variant.padEnd(8)} scavenges ${String(figure.scavenges).padStart(4)}, ${mean.toFixed(2)} ms each, ${figure.scavengeMs.toFixed(0)} ms in all, ${promotedKb} KB promoted each; full collections ${figure.fullCollections}`,
  );
}

if (values.one !== undefined) {
  const [shape, variant] = values.one.split(',') as [keyof typeof SHAPES, keyof typeof VARIANTS];
  await measureOne(shape, variant);
} else {
  console.log(`churn-map-gc: ${seconds} s a run, ${rounds} rounds, each run in a process of its own; node ${process.version}`);
  for (let round = 1; round <= rounds; round++) {
    for (const shape of Object.keys(SHAPES)) {
      for (const variant of Object.keys(VARIANTS)) {
        const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--seconds', String(seconds), '--one', `${shape},${variant}`];
        const { stdout } = await run(process.execPath, args);
        process.stdout.write(`round ${round} ${stdout}`);
      }
    }
  }
}
void sink;
