/**
 * Child process of audit.test.ts: a live writer. It opens a RunQueue on the file log in
 * <dir> (holding its lock), writes audit-scenario.ts's history and prints the tickets as one
 * JSON line; then on each "more" line of stdin submits one more entry ("submitted <id>"),
 * and on "stop" stops. A second argument N: the queue snapshots its views every N records
 * (verify-snapshots.test.ts); else the default snapshots.
 */
import { createInterface } from 'node:readline';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { writeScenario } from './audit-scenario.ts';

const [dir, every] = process.argv.slice(2);
if (!dir) throw new Error('usage: audit-writer.ts <dir> [snapshot every N records]');
const snapshots = every === undefined ? {} : { snapshots: { everyRecords: Number(every) } };
const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2, ...snapshots });
console.log(JSON.stringify(await writeScenario(queue)));
let n = 0;
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'more') {
    const ticket = await queue.submit({ tenant: 'acme', thread: `late-${n++}`, agent: 'mail', input: 'late' });
    console.log(`submitted ${ticket.entryId}`);
  } else if (line === 'stop') {
    await queue.stop();
    console.log('stopped');
    break;
  }
}
