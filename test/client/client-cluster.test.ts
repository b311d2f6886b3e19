/**
 * The RunQueue semantics suite and the Worker suite through the client of a cluster: a real
 * server over the suite's queue answers GET /v1/cluster as the one node of a group, so every
 * call goes through the cluster's client (each call routed to its partition's owner, take in
 * rounds over the owners, onWork the union of the nodes' streams, nextDueAt, metrics, health
 * and prune merged over the owners). The suites need the one queue they check the log of, so
 * the nodes sharing partitions are test/client/cluster.kafka.test.ts's.
 */
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { runQueueContract } from '../contract/run-queue.contract.ts';
import { reopenableMemoryLog } from '../worker/fixtures.ts';
import { workerSemantics } from '../worker/worker.contract.ts';
import { overHttp } from './fixtures.ts';

const name = 'the client of a one-node cluster, on the memory log';
runQueueContract(name, (partitions) => openMemoryLog({ partitions }), { modelRuns: 20, transport: overHttp({}, 'g'), sameTick: false });
workerSemantics(name, reopenableMemoryLog, { transport: overHttp({}, 'g') });
