/**
 * Child process of file-clean-close-crash.test.ts: opens the file log in <dir> as its writer,
 * reads every record of partition 0 (learning the index of a segment opened unread), prints
 * "ready <end offset> <records read>", and then does nothing until it is killed.
 */
import { openFileLog } from '../../src/log/file/file-log.ts';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: idle-writer.ts <dir>');
const log = await openFileLog({ dir, partitions: 1, onWarning: () => {} });
let read = 0;
for await (const _record of log.read(0, 0n)) read++;
process.stdout.write(`ready ${await log.endOffset(0)} ${read}\n`);
setInterval(() => {}, 1 << 30);
