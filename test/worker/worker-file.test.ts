import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { workerSemantics } from './worker.contract.ts';

workerSemantics('the file log', async (partitions, t) => {
  const dir = await mkdtemp(join(tmpdir(), 'runlog-worker-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return { open: () => openFileLog({ dir, partitions }) };
});
