import { openFileLog } from '../../src/log/file/file-log.ts';
import { workerSemantics } from './worker.contract.ts';
import { scratchDir } from '../support/cleanup.ts';

workerSemantics('the file log', async (partitions, t) => {
  const dir = await scratchDir(t, 'runlog-worker-');
  return { open: () => openFileLog({ dir, partitions }) };
});
