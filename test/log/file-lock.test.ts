/**
 * The writer lock of a file log directory (src/log/file/lock.ts): a flock on the directory,
 * held by a child process for the life of the writer. Two writers are impossible whatever
 * happens to the files in the directory; a LOCK file left by anyone never blocks.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { collect, rec } from '../contract/log-records.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { awaitZombie, lockHolder } from './lock-holder.ts';

const writerScript = fileURLToPath(new URL('./crash-writer.ts', import.meta.url));

async function scratch(t: TestContext) {
  const dir = await scratchDir(t, 'runlog-file-lock-');
  const logs: FileLog[] = [];
  onCleanup(t, async () => {
    for (const log of logs) await log.close();
  });
  const warnings: string[] = [];
  const open = async (): Promise<FileLog> => {
    const log = await openFileLog({ dir, partitions: 1, onWarning: (w) => warnings.push(`${w.code} ${w.message}`) });
    logs.push(log);
    return log;
  };
  return { dir, open, warnings, lockFile: join(dir, 'LOCK') };
}

/** A writer in another process (crash-writer.ts), appending under load; `acks` fills as it acknowledges. */
async function startWriter(t: TestContext, dir: string) {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(process.execPath, ['--import', 'tsx', writerScript, dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  onCleanup(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const acks = new Map<bigint, string>();
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const lines = createInterface({ input: child.stdout });
  const linesRead = once(lines, 'close');
  lines.on('line', (line) => {
    if (line === 'ready') return;
    const [offset, key] = line.split(' ');
    acks.set(BigInt(offset!), key!);
    for (const w of waiting.filter((w) => acks.size >= w.count)) w.resolve();
  });
  const acknowledged = (count: number): Promise<void> =>
    new Promise((resolve, reject) => {
      waiting.push({ count, resolve });
      void exited.then(() => reject(new Error(`the writer exited before ${count} acks: ${stderr}`)));
    });
  /** SIGKILLs the writer; resolves with everything it acknowledged. */
  const kill = async (): Promise<Map<bigint, string>> => {
    child.kill('SIGKILL');
    await exited;
    await linesRead;
    return acks;
  };
  return { acknowledged, kill };
}

describe('file log lock', () => {
  it('a live writer in another process keeps others out even after its LOCK file is deleted or rewritten', async (t) => {
    const s = await scratch(t);
    const writer = await startWriter(t, s.dir);
    await writer.acknowledged(200);
    await rm(s.lockFile);
    await assert.rejects(s.open(), (e) => isRunlogError(e, 'Locked') && e.message.includes(s.dir));
    await writeFile(s.lockFile, '999999999');
    await assert.rejects(s.open(), (e) => isRunlogError(e, 'Locked') && e.message.includes('999999999'));
    await writer.acknowledged(400); // still writing, alone
    const acknowledged = await writer.kill();
    // The writer was SIGKILLed: its lock died with it. The next opener proceeds, and finds every acknowledged entry.
    const log = await s.open();
    const byOffset = new Map((await collect(log.read(0, 0n))).map((r) => [r.offset, r.key]));
    for (const [offset, key] of acknowledged) assert.equal(byOffset.get(offset), key, `acknowledged ${offset} ${key}`);
    assert.equal(await readFile(s.lockFile, 'utf8'), `${process.pid}\n`);
  });

  for (const [name, pid] of [
    ['pid 1 (as in a container after a restart)', () => 1],
    ['a live unrelated process (the test runner)', () => process.ppid],
    ['this very process', () => process.pid],
  ] as const) {
    it(`a LOCK file naming ${name} blocks nothing when no process holds the lock`, async (t) => {
      const s = await scratch(t);
      await writeFile(s.lockFile, String(pid()));
      const log = await s.open();
      assert.deepEqual(await log.append(0, [rec('a', '1')]), [0n]);
      if (pid() !== process.pid) assert.match(s.warnings.join('\n'), new RegExp(`RUNLOG_STALE_LOCK .*stale lock.*process ${pid()}`));
      assert.equal(await readFile(s.lockFile, 'utf8'), `${process.pid}\n`);
    });
  }

  it('a LOCK file naming a process that is gone, or holding garbage, blocks nothing', async (t) => {
    const child = spawn(process.execPath, ['-e', '0']);
    await once(child, 'exit');
    for (const content of [String(child.pid), 'not a pid', '']) {
      const s = await scratch(t);
      await writeFile(s.lockFile, content);
      await (await s.open()).append(0, [rec('a', '1')]);
    }
  });

  it("a writer that died a moment ago: the open waits for its lock's holder to exit, not Locked", async (t) => {
    // As after a SIGKILL: LOCK names the dead writer, and its holder (here a stand-in) keeps the flock a moment longer.
    const dead = spawn(process.execPath, ['-e', '0']);
    await once(dead, 'exit');
    const s = await scratch(t);
    await writeFile(s.lockFile, String(dead.pid));
    const holder = spawn('/bin/sh', ['-c', 'exec 9<"$1" && flock -x 9 && echo held && sleep 0.4', 'holder', s.dir]);
    t.after(() => void holder.kill('SIGKILL'));
    await once(holder.stdout, 'data');
    const log = await s.open();
    assert.equal(holder.exitCode, 0, 'the stand-in had let go first');
    assert.deepEqual(await log.append(0, [rec('a', '1')]), [0n]);
  });

  it('a second open in the same process is Locked; close releases the lock and removes LOCK', async (t) => {
    const s = await scratch(t);
    const log = await s.open();
    await assert.rejects(s.open(), (e) => isRunlogError(e, 'Locked') && e.message.includes(`process ${process.pid}`));
    await log.close();
    await assert.rejects(stat(s.lockFile), { code: 'ENOENT' });
    await (await s.open()).append(0, [rec('a', '1')]);
  });

  it('the writer refuses appends once its lock holder is killed, checked before the group commit even before Node reaps the holder', async (t) => {
    const s = await scratch(t);
    const log = await s.open();
    await log.append(0, [rec('a', '1')]);
    const holder = lockHolder();
    process.kill(holder, 'SIGKILL');
    // Wait for the holder to die without yielding to the event loop: Node has not reaped it
    // (no exit event yet), so only the check before the write can tell.
    awaitZombie(holder);
    const refused = log.append(0, [rec('b', '2')]);
    await assert.rejects(refused, (e) => isRunlogError(e, 'Fenced') && /lost the writer lock/.test(e.message));
    await assert.rejects(log.append(0, [rec('c', '3')]), (e) => isRunlogError(e, 'Fenced'));
    // Nothing holds the lock now: another writer may open while the fenced one is still open, and only it writes.
    const next = await s.open();
    await next.append(0, [rec('d', '4')]);
    await assert.rejects(log.append(0, [rec('e', '5')]), (e) => isRunlogError(e, 'Fenced'));
    await log.close();
    assert.deepEqual(
      (await collect(next.read(0, 0n))).map((r) => r.key),
      ['a', 'd'],
    );
  });

  it('a group whose write outlives the lock is not answered as appended: Fenced, its outcome unknown', async (t) => {
    const s = await scratch(t);
    const log = await s.open();
    await log.append(0, [rec('a', '1')]);
    // The holder dies as the group's datasync starts: after its frame was written, and after the
    // check made before the write (which passed). fs.fdatasync is wrapped, the real one still runs.
    const holder = lockHolder();
    const realDatasync = fs.fdatasync;
    const restore = (): void => {
      fs.fdatasync = realDatasync;
      syncBuiltinESMExports();
    };
    onCleanup(t, restore);
    fs.fdatasync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      restore();
      process.kill(holder, 'SIGKILL');
      awaitZombie(holder);
      realDatasync(fd, callback);
    }) as typeof fs.fdatasync;
    syncBuiltinESMExports();
    await assert.rejects(
      log.append(0, [rec('b', '2')]),
      (e) => isRunlogError(e, 'Fenced') && /may or may not be in the log/.test(e.message),
    );
    await assert.rejects(log.append(0, [rec('c', '3')]), (e) => isRunlogError(e, 'Fenced'));
    await log.close();
  });

  it('a queue that lost its lock publishes no snapshot, at a stop or after', async (t) => {
    const s = await scratch(t);
    const queue = await openRunQueue({ log: { kind: 'file', dir: s.dir }, clock: new FakeClock().read, onWarning: () => {} });
    let stopped = false;
    onCleanup(t, () => (stopped ? undefined : queue.stop()));
    for (const thread of ['t1', 't2']) await queue.submit(submitOf('acme', thread));
    const snapshotsDir = join(s.dir, 'snapshots', 'partition-0');
    const before = await readdir(snapshotsDir).catch(() => []);
    const holder = lockHolder();
    process.kill(holder, 'SIGKILL');
    awaitZombie(holder);
    await queue.stop().catch((error: unknown) => assert.ok(isRunlogError(error, 'Fenced'), `stop failed with ${String(error)}`));
    stopped = true;
    assert.deepEqual(await readdir(snapshotsDir).catch(() => []), before, 'no snapshot written after the lock was lost');
  });

  it('an open without flock(1) on the PATH fails clearly and leaves nothing behind', async (t) => {
    const parent = await scratchDir(t, 'runlog-file-lock-');
    const path = process.env.PATH;
    process.env.PATH = parent; // holds no flock
    onCleanup(t, () => void (process.env.PATH = path));
    const dir = join(parent, 'log');
    await assert.rejects(openFileLog({ dir }), (e) => isRunlogError(e, 'LogUnavailable') && /flock\(1\).*util-linux/.test(e.message));
    assert.deepEqual(await readdir(parent), []);
  });

  it('a RunQueue whose file log lost its lock answers every command Fenced', async (t) => {
    const s = await scratch(t);
    const queue = await openRunQueue({ log: { kind: 'file', dir: s.dir }, clock: new FakeClock().read, onWarning: () => {} });
    onCleanup(t, () => queue.stop());
    await queue.submit(submitOf('acme', 't1'));
    const holder = lockHolder();
    process.kill(holder, 'SIGKILL');
    awaitZombie(holder);
    for (const thread of ['t2', 't3']) await assert.rejects(queue.submit(submitOf('acme', thread)), (e) => isRunlogError(e, 'Fenced'));
  });
});
