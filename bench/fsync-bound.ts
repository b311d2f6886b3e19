/**
 * `node --import tsx bench/fsync-bound.ts [--seconds 3] [--rounds 3] [--bytes 4096] [--dir DIR]`
 *
 * The fsync bound of the file log (issue 12's 20k lifecycles/s): how many write + fdatasync
 * pairs per second one writer gets when each write extends the file (a growing segment, as
 * the file log writes today: each datasync also commits the new size) against writes into
 * space allocated and synced beforehand (a preallocated segment: the datasync flushes data
 * only). Rounds alternate growing / preallocated so both see the same minutes of a shared
 * machine; the load average is printed beside each figure. Not part of `npm run bench`.
 */
import { closeSync, fdatasyncSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    bytes: { type: 'string', default: '4096' },
    dir: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const writeBytes = Number(values.bytes);
const dir = mkdtempSync(join(values.dir ?? os.tmpdir(), 'runlog-fsync-'));
const PREALLOCATED_BYTES = 256 << 20;

interface Figure {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** write + fdatasync pairs for `seconds`, each write at the next position of `fd`. */
function syncLoop(fd: number): Figure {
  const chunk = Buffer.alloc(writeBytes, 0x61);
  const latencies: number[] = [];
  const started = performance.now();
  for (let position = 0; performance.now() - started < seconds * 1000; position += writeBytes) {
    const at = performance.now();
    writeSync(fd, chunk, 0, writeBytes, position);
    fdatasyncSync(fd);
    latencies.push(performance.now() - at);
  }
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { perSecond: latencies.length / elapsed, p50Ms: q(0.5), p99Ms: q(0.99) };
}

function growing(round: number): Figure {
  const path = join(dir, `growing-${round}`);
  const fd = openSync(path, 'w');
  try {
    return syncLoop(fd);
  } finally {
    closeSync(fd);
    rmSync(path);
  }
}

/** Zeros written and fsynced first (Node has no fallocate): every later write lands in allocated blocks. */
function preallocated(round: number): Figure {
  const path = join(dir, `prealloc-${round}`);
  const fd = openSync(path, 'w');
  try {
    const zeros = Buffer.alloc(1 << 20);
    for (let at = 0; at < PREALLOCATED_BYTES; at += zeros.length) writeSync(fd, zeros, 0, zeros.length, at);
    fsyncSync(fd);
    return syncLoop(fd);
  } finally {
    closeSync(fd);
    rmSync(path);
  }
}

const load = (): string =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const show = (name: string, f: Figure): string =>
  `${name.padEnd(12)} ${Math.round(f.perSecond).toString().padStart(6)} syncs/s  p50 ${f.p50Ms.toFixed(2)} ms  p99 ${f.p99Ms.toFixed(2)} ms  (load ${load()})`;

console.log(`fdatasync of ${writeBytes}-byte writes, ${seconds} s each, in ${dir}; ${os.cpus().length} cores`);
const ratios: number[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always meets the start (or the end) of a busy spell.
    let grown: Figure;
    let allocated: Figure;
    if (round % 2 === 0) {
      grown = growing(round);
      allocated = preallocated(round);
    } else {
      allocated = preallocated(round);
      grown = growing(round);
    }
    console.log(show('growing', grown));
    console.log(show('preallocated', allocated));
    ratios.push(allocated.perSecond / grown.perSecond);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
ratios.sort((a, b) => a - b);
console.log(
  `preallocated / growing syncs/s, per round: ${ratios.map((r) => r.toFixed(2)).join(', ')} (median ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)})`,
);
