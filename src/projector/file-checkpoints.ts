/**
 * Checkpoints beside an embedded file log: `<dir>/projections/<name>.checkpoint`, one file per
 * projection, replaced whole: written to a temporary file, fsync'd, renamed over the old one
 * and the directory fsync'd, so a crash leaves the old checkpoint or the new one, never a
 * torn one. The file log ignores the directory. Checkpoints name the log's id (log.json), so
 * a log replaced in the same directory is not resumed from another's checkpoints.
 */
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { invalidArgument } from '../errors.ts';
import { requirePath } from '../validation/index.ts';
import { findLog } from '../log/file/log-meta.ts';
import { syncDir } from '../log/file/sync.ts';
import { projectionName } from '../../projections/projection.ts';
import type { CheckpointStore } from './checkpoint-store.ts';

export const CHECKPOINT_DIR = 'projections';

/** The checkpoint store of the file log in `dir` (which must hold one). */
export async function fileCheckpoints(dir: string): Promise<CheckpointStore> {
  requirePath('dir', dir);
  const found = await findLog(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return { kind: 'none' as const };
    throw error;
  });
  if (found.kind !== 'log') throw invalidArgument(`dir ${dir} holds no runlog file log to keep projection checkpoints beside`);
  const folder = join(dir, CHECKPOINT_DIR);
  const pathOf = (name: string): string => join(folder, `${projectionName(name)}.checkpoint`);
  return {
    logId: found.description.logId,
    async load(name) {
      try {
        return new Uint8Array(await readFile(pathOf(name)));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    async save(name, bytes) {
      const path = pathOf(name);
      await mkdir(folder, { recursive: true });
      const temporary = `${path}.tmp`;
      const handle = await open(temporary, 'w');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, path);
      await syncDir(folder);
    },
    async remove(name) {
      await rm(pathOf(name), { force: true });
    },
    close: async () => {},
  };
}
