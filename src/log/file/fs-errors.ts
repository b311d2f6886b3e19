/** What a file system error while opening a file log becomes: a RunlogError naming the path, never a raw Node error. */
import { RunlogError } from '../../errors.ts';

/** The file system refuses for good until someone changes permissions or mounts. */
const REFUSED = new Set(['EACCES', 'EPERM', 'EROFS']);

export function openFailure(dir: string, error: unknown): RunlogError {
  if (error instanceof RunlogError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (code === 'ENOTDIR')
    return new RunlogError('InvalidArgument', `cannot open the file log in ${dir}: a part of the path is not a directory (${detail})`, {
      cause: error,
    });
  if (code !== undefined && REFUSED.has(code)) {
    return new RunlogError('LogUnavailable', `cannot open the file log in ${dir}: ${detail}`, { cause: error, retriable: false });
  }
  if (code === 'EMFILE' || code === 'ENFILE') {
    const hint =
      'a file log holds a descriptor per partition and one per segment it reads: raise the limit (ulimit -n) or use fewer partitions';
    return new RunlogError('LogUnavailable', `cannot open the file log in ${dir}: ${detail}; ${hint}`, { cause: error });
  }
  return new RunlogError('LogUnavailable', `cannot open the file log in ${dir}: ${detail}`, { cause: error });
}
