/**
 * The RunQueue semantics suite and the Worker suite through the client and a real server on
 * the file log (see client-memory.test.ts for what does not carry over HTTP).
 */
import type { TestContext } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { runQueueContract } from '../contract/run-queue.contract.ts';
import { scratchDir } from '../support/cleanup.ts';
import { workerSemantics } from '../worker/worker.contract.ts';
import { overHttp } from './fixtures.ts';

const name = 'the client and a server, on the file log';
async function openLog(partitions: number, t: TestContext) {
  return openFileLog({ dir: await scratchDir(t, 'runlog-client-'), partitions });
}
runQueueContract(name, openLog, { modelRuns: 20, transport: overHttp(), sameTick: false });
workerSemantics(
  name,
  async (partitions, t) => {
    const dir = await scratchDir(t, 'runlog-client-worker-');
    return { open: () => openFileLog({ dir, partitions }) };
  },
  { transport: overHttp() },
);
