/**
 * The RunQueue semantics suite and the Worker suite through the client and a real server on
 * a memory log (one more backend of both suites). Over HTTP, commands issued together reach
 * the queue in any order, so the same-tick races are skipped and the model property issues
 * one command at a time (Backend.sameTick).
 */
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { runQueueContract } from '../contract/run-queue.contract.ts';
import { reopenableMemoryLog } from '../worker/fixtures.ts';
import { workerSemantics } from '../worker/worker.contract.ts';
import { overHttp } from './fixtures.ts';

const name = 'the client and a server, on the memory log';
runQueueContract(name, (partitions) => openMemoryLog({ partitions }), { modelRuns: 60, transport: overHttp(), sameTick: false });
workerSemantics(name, reopenableMemoryLog, { transport: overHttp() });
