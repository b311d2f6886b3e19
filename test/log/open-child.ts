/**
 * Child process of file-open-failure.test.ts: opens the file log in <dir> with <partitions>
 * (run under a low descriptor limit) and prints what happened as one line of JSON.
 */
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';

const [dir, partitions] = process.argv.slice(2);
if (!dir || !partitions) throw new Error('usage: open-child.ts <dir> <partitions>');
try {
  const log = await openFileLog({ dir, partitions: Number(partitions), onWarning: () => {} });
  await log.close();
  process.stdout.write(`${JSON.stringify({ opened: true })}\n`);
} catch (error) {
  const code = isRunlogError(error) ? error.code : null;
  process.stdout.write(`${JSON.stringify({ opened: false, code, message: String(error instanceof Error ? error.message : error) })}\n`);
}
