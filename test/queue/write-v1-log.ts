/**
 * Writes test/fixtures/v1-log/ (run once, by hand: `node --import tsx test/queue/write-v1-log.ts`):
 * a file log of 2 partitions written by runlog at 7c7126c, whose snapshots are the v1 snapshot
 * format (ticket index columns as INDEX-COLUMNS.md v1), with records after the latest snapshot,
 * and expected.json: every entry's answer as that version gave it. snapshot-upgrade.test.ts opens
 * copies of it with the code of the day. Existing fixtures are never overwritten.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { Entry } from '../../src/queue/types.ts';

const dir = join(import.meta.dirname, '../fixtures/v1-log');
if (existsSync(dir)) throw new Error(`${dir} exists: never overwritten`);
let now = 1_764_547_200_000;
const clock = (): number => now;

async function work(queue: RunQueue, round: number, submits: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < submits; i++) {
    now += 7;
    const tenant = i % 5 === 0 ? 'beta' : 'acme';
    const key = i % 3 === 0 ? { key: `k-${round}-${i}` } : {};
    const ticket = await queue.submit({ tenant, thread: `t${i % 6}`, agent: 'build', input: `r${round} input ${i}`, ...key });
    ids.push(`${tenant} ${ticket.entryId}`);
  }
  for (let i = 0; i < submits * 0.7; i++) {
    now += 11;
    const taken = await queue.take({ agents: ['build'], holder: `h${i}`, ttlMs: 60_000 });
    if (taken === null) break;
    await queue.startAttempt(taken.lease, `run-${round}-${i}`);
    if (i % 7 === 3) await queue.yield(taken.lease, { kind: 'retry', error: 'try again' });
    else await queue.close(taken.lease, i % 4 === 1 ? { status: 'failed', result: 'no' } : { status: 'succeeded', result: `ok ${i}` });
  }
  return ids;
}

const ids: string[] = [];
const first = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2, clock, snapshots: { everyRecords: 400, everyMs: 600_000 } });
ids.push(...(await work(first, 0, 300)));
const [tenant, entryId] = ids.at(-1)!.split(' ') as [string, string];
await first.cancel(tenant, entryId, 'not wanted');
await first.stop(); // its last snapshot of each partition
const second = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2, clock, snapshots: false });
ids.push(...(await work(second, 1, 40))); // records after the latest snapshots
const expected: Record<string, Entry> = {};
for (const id of ids) {
  const [tenant, entryId] = id.split(' ') as [string, string];
  expected[entryId] = await second.entry(tenant, entryId);
}
await second.stop();
const json = JSON.stringify(expected, (_, value: unknown) =>
  value instanceof Uint8Array ? { bytes: Buffer.from(value).toString('base64') } : value,
);
await writeFile(join(dir, 'expected.json'), json + '\n');
