/**
 * Child process of snapshot-array-count.test.ts: opens each partition of the file log in
 * argv[2] as a restart does (its latest valid snapshot, then the records after it) and from
 * zero, and prints one JSON line: the warnings, and whether each view equals the replay. Run
 * with a small heap: a decode that reads without bound dies here, not in the test runner.
 */
import { isDeepStrictEqual } from 'node:util';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openView } from '../../src/projector/snapshots.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { snapshotView } from '../support/snapshot-view.ts';

const warnings: RunlogWarning[] = [];
const log = await openFileLog({ dir: process.argv[2]!, onWarning: (warning) => warnings.push(warning) });
const equal: boolean[] = [];
for (let p = 0; p < log.partitions; p++) {
  const opened = await openView(log, p, (warning) => warnings.push(warning));
  equal.push(isDeepStrictEqual(snapshotView(opened.view), snapshotView(await replayPartition(log, p))));
}
await log.close();
process.stdout.write(JSON.stringify({ warnings, equal }) + '\n');
