/**
 * Child process of the damaged-snapshot tests (snapshot-damage.ts openInChild): opens each
 * partition of a log as a restart does (its latest valid snapshot, then the records after it)
 * and from zero, and prints one JSON line a partition as soon as it is opened: the warnings of
 * its open, and whether its view equals the replay. The log: `file <dir>`, or `kafka <topic>`
 * (on KAFKA_BROKERS). Run with a small heap: a decode that reads without bound dies here, not in
 * the test runner, and the lines printed before say how far it got.
 */
import { writeSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { EventLog } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openView } from '../../src/projector/snapshots.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { snapshotView } from '../support/snapshot-view.ts';

const [kind, where] = process.argv.slice(2);
let warnings: RunlogWarning[] = [];
const onWarning = (warning: RunlogWarning): void => void warnings.push(warning);
const log: EventLog =
  kind === 'kafka'
    ? await openKafkaLog({ brokers: process.env.KAFKA_BROKERS!.split(','), topic: where!, readOnly: true })
    : await openFileLog({ dir: where!, onWarning });
for (let partition = 0; partition < log.partitions; partition++) {
  warnings = [];
  const opened = await openView(log, partition, onWarning);
  const equal = isDeepStrictEqual(snapshotView(opened.view), snapshotView(await replayPartition(log, partition)));
  writeSync(1, JSON.stringify({ partition, warnings, equal }) + '\n'); // at once: the next partition's open may kill the process
}
await log.close();
