/**
 * A small real file system for disk-full tests: a fresh tmpfs mounted on a new directory (the
 * caller unmounts it), and a file written until the file system refuses with ENOSPC. Mounting
 * needs CAP_SYS_ADMIN (root here); where it is not permitted the test is skipped, saying so.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/** A fresh tmpfs of `size` mounted on a new directory; null (the test skipped) if mounting is not permitted. */
export async function smallTmpfs(t: TestContext, size: string): Promise<string | null> {
  const mountPoint = await mkdtemp(join(tmpdir(), 'runlog-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'runlog-disk-full', mountPoint], { stdio: 'pipe' });
  } catch (error) {
    await rm(mountPoint, { recursive: true, force: true });
    t.skip(`mount -t tmpfs is not permitted here: ${String(error).split('\n')[0]}`);
    return null;
  }
  return mountPoint;
}

/** Writes a file until the file system refuses with ENOSPC. */
export function fill(path: string): void {
  const fd = openSync(path, 'w');
  try {
    const chunk = Buffer.alloc(64 << 10, 1);
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}
