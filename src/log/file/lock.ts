/**
 * The writer lock of a log directory: a file `LOCK` holding the owner's pid. It is made
 * whole before it exists: the pid is written to a private file, which is then hard-linked
 * as `LOCK` (link fails if `LOCK` exists), so a crash can never leave an empty lock. A lock
 * whose pid is not alive (kill(pid, 0) fails with ESRCH) is stale — its owner crashed —
 * and is taken over. A lock file that is unreadable is treated as held: delete it by hand.
 *
 * Limits: this is an advisory pid lock for processes on one host; two processes taking
 * over the same stale lock at the very same moment are not told apart.
 */
import { randomUUID } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunlogError } from '../../errors.ts';
import type { WarningListener } from '../../warnings.ts';

export interface DirLock {
  release(): Promise<void>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function ownerOf(path: string): Promise<number | null> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return -1; // gone meanwhile: retry
    throw error;
  }
}

async function tryCreate(path: string): Promise<boolean> {
  const draft = `${path}.${process.pid}.${randomUUID()}`;
  await writeFile(draft, String(process.pid), { flag: 'wx' });
  try {
    await link(draft, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(draft, { force: true });
  }
}

export async function acquireLock(dir: string, onWarning: WarningListener): Promise<DirLock> {
  const path = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await tryCreate(path)) return { release: () => releaseLock(path) };
    const owner = await ownerOf(path);
    if (owner === -1) continue;
    if (owner === null || isAlive(owner)) {
      throw new RunlogError('Locked', `${dir} is locked by ${owner === null ? 'an unknown process' : `process ${owner}`} (${path})`);
    }
    onWarning({ code: 'RUNLOG_STALE_LOCK', message: `${path}: taking over the stale lock of process ${owner}, which is not running` });
    await rm(path, { force: true });
  }
  throw new RunlogError('Locked', `${dir}: could not take the lock ${path}`);
}

async function releaseLock(path: string): Promise<void> {
  if ((await ownerOf(path)) === process.pid) await rm(path, { force: true });
}
