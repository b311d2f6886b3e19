/**
 * Child process of file-clean-close-crash.test.ts: opens the file log in <dir> as its writer and,
 * until it is killed, compacts partition 0 (a roll, then a rewrite of every sealed segment) and
 * appends a record, printing "<offset> <key>" as each append is acknowledged. Keys are unique,
 * so compaction keeps every record: a reopen must find them all, at their offsets.
 */
import { openFileLog } from '../../src/log/file/file-log.ts';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: compacting-writer.ts <dir>');
const log = await openFileLog({ dir, partitions: 1, onWarning: () => {} });
const encoder = new TextEncoder();
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  await log.compact(0);
  const key = `${process.pid}/${i}`;
  const [offset] = await log.append(0, [{ key, value: encoder.encode(`value:${key}`) }]);
  process.stdout.write(`${offset} ${key}\n`);
}
