/** What a file system error while opening a file log becomes: a RunlogError naming the path, never a raw Node error. */
import { RunlogError } from '../../errors.ts';

/** The file system refuses for good until someone changes permissions or mounts. */
const REFUSED = new Set(['EACCES', 'EPERM', 'EROFS']);

const DESCRIPTORS_HINT =
  'a file log holds a descriptor per partition and one per segment it reads: raise the limit (ulimit -n) or use fewer partitions';

/**
 * What opening a segment to read it fails with: the process out of descriptors (EMFILE,
 * ENFILE) is LogUnavailable and retriable (it passes once descriptors are freed); anything
 * else is left as it is, for the reader's own handling.
 */
export function segmentReadFailure(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code !== 'EMFILE' && code !== 'ENFILE') return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new RunlogError('LogUnavailable', `cannot open ${path} to read it: ${detail}; ${DESCRIPTORS_HINT}`, { cause: error });
}

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
    return new RunlogError('LogUnavailable', `cannot open the file log in ${dir}: ${detail}; ${DESCRIPTORS_HINT}`, { cause: error });
  }
  return new RunlogError('LogUnavailable', `cannot open the file log in ${dir}: ${detail}`, { cause: error });
}
