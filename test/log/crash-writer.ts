/**
 * Child process of file-crash.test.ts: appends to the file log in <dir> under load (many
 * concurrent callers) and prints "<offset> <key>" for each record as soon as its append
 * resolves, i.e. once it is acknowledged durable. It runs until it is killed.
 * The value of each record is `value:<key>`, so the parent can check it. With a small
 * segmentBytes the log rolls every few appends, so a kill often lands inside a roll.
 */
import { openFileLog } from '../../src/log/file/file-log.ts';

const [dir, segmentBytes] = process.argv.slice(2);
if (!dir) throw new Error('usage: crash-writer.ts <dir> [segmentBytes]');
const log = await openFileLog({ dir, partitions: 1, ...(segmentBytes ? { segmentBytes: Number(segmentBytes) } : {}) });
const encoder = new TextEncoder();
const run = process.pid;

async function caller(c: number): Promise<never> {
  for (let i = 0; ; i++) {
    const keys = Array.from({ length: 1 + (i % 3) }, (_, j) => `${run}/${c}/${i}/${j}`);
    const offsets = await log.append(
      0,
      keys.map((key) => ({ key, value: encoder.encode(`value:${key}`) })),
    );
    process.stdout.write(offsets.map((offset, j) => `${offset} ${keys[j]}\n`).join(''));
  }
}

process.stdout.write('ready\n');
await Promise.all(Array.from({ length: 64 }, (_, c) => caller(c)));
