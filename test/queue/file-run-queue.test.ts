import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { runQueueSemantics } from '../contract/run-queue.contract.ts';
import { runQueueModelProperty } from '../contract/run-queue.property.ts';
import { runQueueOwnedValues } from '../contract/run-queue-owned-values.contract.ts';
import { runQueueRaces } from '../contract/run-queue-races.contract.ts';

async function openLog(partitions: number, t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'runlog-queue-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return openFileLog({ dir, partitions });
}

runQueueSemantics('the file log', openLog);
runQueueOwnedValues('the file log', openLog);
runQueueRaces('the file log', openLog);
runQueueModelProperty('the file log', openLog, 60);
