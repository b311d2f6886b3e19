/**
 * The clean close (src/log/file/recovery.ts: CLEAN CLOSE) against real processes: a writer
 * that reopened a cleanly closed log is SIGKILLed, after appending (the next open finds the
 * segment changed, scans it, cuts a torn tail and keeps every acknowledged append), without
 * appending (the next open trusts the segment again), while compacting (rolls and rewrites
 * under a clean record not yet refreshed) or during its own clean close; and read-only opens
 * taken while such a writer appends read every record it had acknowledged.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it, type TestContext } from 'node:test';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { rec } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { appendMany, cleanOf, opensUnread, readBack, readRecord, recordPath, type Written } from './clean-close.ts';
import { segmentPaths } from './file-damage.ts';

const CRASH_WRITER = join(import.meta.dirname, 'crash-writer.ts');
const IDLE_WRITER = join(import.meta.dirname, 'idle-writer.ts');
const CLOSING_WRITER = join(import.meta.dirname, 'closing-writer.ts');
const COMPACTING_WRITER = join(import.meta.dirname, 'compacting-writer.ts');

/** A child process running `script` on `args`; its lines go to `onLine`. `kill()` SIGKILLs it and waits for its end. */
function child(t: TestContext, script: string, args: string[], onLine: (line: string) => void) {
  const running = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(running, 'exit');
  let stderr = '';
  running.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: running.stdout });
  const linesRead = once(lines, 'close');
  lines.on('line', onLine);
  onCleanup(t, async () => {
    if (running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
    await exited;
  });
  /** `orExit`: the child may have ended by itself (successfully) before the kill. */
  const kill = async ({ orExit = false } = {}): Promise<void> => {
    running.kill('SIGKILL');
    const [code, signal] = await exited;
    await linesRead;
    if (orExit && code === 0) return;
    assert.equal(signal, 'SIGKILL', `the child ended by itself (code ${code}): ${stderr}`);
  };
  const ended = exited.then(() => new Error(`the child ended: ${stderr}`));
  return { kill, ended };
}

/** crash-writer.ts on `dir`, appending under load: `acks` fills as it acknowledges; `acknowledged(n)` waits for n. */
function crashWriter(t: TestContext, dir: string, segmentBytes: number | undefined) {
  const acks = new Map<bigint, string>();
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const writer = child(t, CRASH_WRITER, [dir, ...(segmentBytes ? [String(segmentBytes)] : [])], (line) => {
    if (line === 'ready') return;
    const [offset, key] = line.split(' ');
    acks.set(BigInt(offset!), key!);
    for (const w of waiting.filter((w) => acks.size >= w.count)) w.resolve();
  });
  const acknowledged = (count: number): Promise<void> =>
    Promise.race([new Promise<void>((resolve) => waiting.push({ count, resolve })), writer.ended.then((error) => Promise.reject(error))]);
  return { acks, acknowledged, kill: writer.kill };
}

/** Every record of `log`: the first `before` as written, then crash-writer's (value `value:<key>`), dense from 0, every ack in place. */
async function assertHolds(log: FileLog, before: readonly Written[], acks: ReadonlyMap<bigint, string>): Promise<bigint> {
  const records = await readBack(log);
  assert.deepEqual(records.slice(0, before.length), before, 'the records of the clean close are intact');
  records.forEach((r, i) => assert.equal(r.offset, BigInt(i), 'offsets are dense and increasing'));
  for (const r of records.slice(before.length)) assert.equal(r.value, `value:${r.key}`);
  const byOffset = new Map(records.map((r) => [r.offset, r.key]));
  for (const [offset, key] of acks) assert.equal(byOffset.get(offset), key, `acknowledged ${offset} ${key}`);
  return BigInt(records.length);
}

/** A cleanly closed log in a fresh directory: its records (`unique`: no key twice, no tombstone, so compaction keeps them all). */
async function cleanlyClosed(t: TestContext, count: number, keys: 'unique' | 'any' = 'any'): Promise<{ dir: string; before: Written[] }> {
  const dir = await scratchDir(t, 'runlog-clean-crash-');
  const log = await openFileLog({ dir, partitions: 1, onWarning: () => {} });
  const before = keys === 'unique' ? await appendUnique(log, count) : await appendMany(log, count, 'pre');
  await log.close();
  assert.ok(cleanOf(await readRecord(dir)));
  return { dir, before };
}

async function appendUnique(log: FileLog, count: number): Promise<Written[]> {
  const written: Written[] = [];
  for (let i = 0; i < count; i += 4) {
    const keys = [0, 1, 2, 3].map((j) => `pre/${i + j}`);
    const offsets = await log.append(
      0,
      keys.map((key) => rec(key, `value:${key}`)),
    );
    keys.forEach((key, j) => written.push({ offset: offsets[j]!, key, value: `value:${key}` }));
  }
  return written;
}

describe('file log: a writer killed after a clean reopen', () => {
  for (const [name, segmentBytes] of [
    ['in one segment', undefined],
    ['rolling a segment every few appends', 4096],
  ] as const) {
    it(`after appending: the next open scans the changed segment, cuts a torn tail, keeps every acknowledged append (${name})`, async (t) => {
      const { dir, before } = await cleanlyClosed(t, 300);
      const acknowledged = new Map<bigint, string>();
      for (const [round, acksBeforeKill] of [1, 300, 1500].entries()) {
        // (The probe needs two frames in the last segment: only the first round's, written by the clean close
        // before any writer rolled, surely has them; a killed writer may leave one frame in the segment it rolled to.)
        const probe = round === 0;
        if (probe) assert.equal(await opensUnread(t, dir, false), true, `round ${round}: the writer reopens a clean close`);
        const stale = await readFile(recordPath(dir));
        const writer = crashWriter(t, dir, segmentBytes);
        await writer.acknowledged(acksBeforeKill);
        await writer.kill();
        for (const [offset, key] of writer.acks) acknowledged.set(offset, key);
        // Rounds 0 and 2: as if killed before the record's refresh, the clean record of the last close stays.
        if (round !== 1) await writeFile(recordPath(dir), stale);
        // And a torn write after whatever the kill left: a frame's first bytes. (Not where a roll may
        // have been killed after its seal: nothing is ever written after a seal.)
        const torn = segmentBytes === undefined;
        if (torn) {
          const last = (await segmentPaths(join(dir, 'partition-0'))).at(-1)!;
          await appendFile(last, (await readFile(last)).subarray(SEGMENT_HEADER_BYTES, SEGMENT_HEADER_BYTES + 30));
        }

        // The writer sealed the segment the clean close left before its first append: what it wrote lies in a
        // segment no clean record names, so the next open scans it.
        const lastBase = BigInt((await segmentPaths(join(dir, 'partition-0'))).at(-1)!.split('/').at(-1)!.replace('.log', ''));
        assert.notEqual(lastBase, cleanOf(JSON.parse(stale.toString()))?.segment, 'the writer rolled before appending');
        const reader = await openFileLog({ dir, readOnly: true, onWarning: () => {} });
        const seen = await readBack(reader);
        await reader.close();
        const warnings: string[] = [];
        const log = await openFileLog({
          dir,
          partitions: 1,
          ...(segmentBytes ? { segmentBytes } : {}),
          onWarning: (w) => warnings.push(w.code),
        });
        try {
          if (torn) assert.ok(warnings.includes('RUNLOG_TORN_TAIL'), warnings.join());
          assert.deepEqual(await readBack(log), seen, 'the read-only open read what the repairing open keeps');
          const end = await assertHolds(log, before, acknowledged);
          assert.equal(await log.endOffset(0), end);
        } finally {
          await log.close();
        }
      }
    });
  }

  it('without appending (having read everything): the next open trusts the segment again and reads every record', async (t) => {
    const { dir, before } = await cleanlyClosed(t, 400);
    const record = await readFile(recordPath(dir), 'utf8');
    let ready: (line: string) => void = () => {};
    const readied = new Promise<string>((resolve) => (ready = resolve));
    const writer = child(t, IDLE_WRITER, [dir], (line) => ready(line));
    assert.equal(await Promise.race([readied, writer.ended.then((error) => Promise.reject(error))]), 'ready 400 400');
    await writer.kill();
    assert.equal(await readFile(recordPath(dir), 'utf8'), record, 'the killed writer changed no record');
    assert.equal(await opensUnread(t, dir, false), true);
    const warnings: string[] = [];
    const log = await openFileLog({ dir, onWarning: (w) => warnings.push(w.code) });
    onCleanup(t, () => log.close());
    assert.deepEqual(
      warnings.filter((w) => w !== 'RUNLOG_STALE_LOCK'),
      [],
    );
    assert.equal(await log.endOffset(0), 400n);
    assert.deepEqual(await readBack(log), before);
  });
});

describe('file log: a writer killed while compacting after a clean reopen', () => {
  it('its rolls and rewrites change the segments under a clean record it has not refreshed: the next open finds every record', async (t) => {
    const { dir, before } = await cleanlyClosed(t, 200, 'unique');
    const acknowledged = new Map<bigint, string>();
    for (const acksBeforeKill of [0, 1, 4, 12]) {
      const acks = new Map<bigint, string>();
      let ready: () => void = () => {};
      const readied = new Promise<void>((resolve) => (ready = resolve));
      const waiting: Array<{ count: number; resolve: () => void }> = [];
      const writer = child(t, COMPACTING_WRITER, [dir], (line) => {
        if (line === 'ready') return ready();
        const [offset, key] = line.split(' ');
        acks.set(BigInt(offset!), key!);
        for (const w of waiting.filter((w) => acks.size >= w.count)) w.resolve();
      });
      const acked = acksBeforeKill === 0 ? readied : new Promise<void>((resolve) => waiting.push({ count: acksBeforeKill, resolve }));
      await Promise.race([acked, writer.ended.then((error) => Promise.reject(error))]);
      await writer.kill();
      for (const [offset, key] of acks) acknowledged.set(offset, key);
      const log = await openFileLog({ dir, partitions: 1, onWarning: () => {} });
      try {
        await assertHolds(log, before, acknowledged);
      } finally {
        await log.close();
      }
    }
  });
});

describe('file log: a writer killed during its clean close', () => {
  it('wherever the kill lands (before, inside or after writing the record), the next open reads every acknowledged record', async (t) => {
    const { dir, before } = await cleanlyClosed(t, 200);
    const acknowledged = new Map<bigint, string>();
    let closedBeforeKill = 0;
    for (const count of [1, 5, 20, 60, 3, 40]) {
      let closing: () => void = () => {};
      const reachedClose = new Promise<void>((resolve) => (closing = resolve));
      const writer = child(t, CLOSING_WRITER, [dir, String(count)], (line) => {
        if (line === 'closing') return closing();
        if (line === 'closed') return void closedBeforeKill++;
        const [offset, key] = line.split(' ');
        acknowledged.set(BigInt(offset!), key!);
      });
      await Promise.race([reachedClose, writer.ended.then((error) => Promise.reject(error))]);
      await writer.kill({ orExit: true });
      const log = await openFileLog({ dir, partitions: 1, onWarning: () => {} });
      try {
        await assertHolds(log, before, acknowledged);
      } finally {
        await log.close();
      }
    }
    t.diagnostic(`${closedBeforeKill} of 6 writers finished their close before the kill`);
  });
});

describe('file log: read-only opens of a cleanly closed log', () => {
  it('while a writer that reopened it appends, each reads every record acknowledged before it opened', async (t) => {
    const { dir, before } = await cleanlyClosed(t, 300);
    const writer = crashWriter(t, dir, undefined);
    for (const wanted of [1, 100, 400, 900]) {
      await writer.acknowledged(wanted);
      const acked = new Map(writer.acks);
      const reader = await openFileLog({ dir, readOnly: true, onWarning: () => {} });
      try {
        const end = await assertHolds(reader, before, acked);
        assert.equal(await reader.endOffset(0), end);
        assert.ok(end >= 300n + BigInt(acked.size));
      } finally {
        await reader.close();
      }
    }
    await writer.kill();
  });
});
