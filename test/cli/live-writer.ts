/**
 * Child process of runlog-cli.test.ts: a live writer. It opens a RunQueue on the file log
 * in <dir> (holding the log's lock), submits five entries and prints "ready 5 <last ticket
 * id>", then on each "more" line of stdin submits one more ("submitted <n>"), and on
 * "stop" stops.
 */
import { createInterface } from 'node:readline';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: live-writer.ts <dir>');
const queue = await openRunQueue({ log: { kind: 'file', dir } });
let submitted = 0;
let last = '';
const submit = async (): Promise<void> => {
  last = (await queue.submit({ tenant: 'acme', thread: `order-${submitted}`, agent: 'billing', input: `job ${submitted}` })).entryId;
  submitted++;
};
for (let i = 0; i < 5; i++) await submit();
console.log(`ready ${submitted} ${last}`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'more') {
    await submit();
    console.log(`submitted ${submitted}`);
  } else if (line === 'stop') {
    await queue.stop();
    console.log('stopped');
    break;
  }
}
