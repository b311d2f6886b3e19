/**
 * Child process of file-clean-close-crash.test.ts: opens the file log in <dir> as its writer,
 * appends <count> records one append at a time, printing "<offset> <key>" as each is
 * acknowledged, then prints "closing" and closes the log (a clean close: it writes the
 * reached record, clean included), and prints "closed". The parent kills it somewhere in there.
 */
import { openFileLog } from '../../src/log/file/file-log.ts';

const [dir, count] = process.argv.slice(2);
if (!dir || !count) throw new Error('usage: closing-writer.ts <dir> <count>');
const log = await openFileLog({ dir, partitions: 1, onWarning: () => {} });
const encoder = new TextEncoder();
for (let i = 0; i < Number(count); i++) {
  const key = `${process.pid}/${i}`;
  const [offset] = await log.append(0, [{ key, value: encoder.encode(`value:${key}`) }]);
  process.stdout.write(`${offset} ${key}\n`);
}
process.stdout.write('closing\n');
await log.close();
process.stdout.write('closed\n');
