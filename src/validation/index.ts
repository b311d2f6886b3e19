/**
 * runlog's argument checks, one module for every layer (events, log, queue, worker, cli):
 * bad input is a RunlogError('InvalidArgument') naming the argument and showing the value
 * as describe() does (the one describer of values in runlog's messages); nothing is
 * written. Each check reads a value once and runs none of the caller's code (see
 * options-object.ts and brand-checks.ts).
 *
 * Hand-written small functions, not a schema library: the submit path runs them on every
 * call, and a library would be a dependency for about 200 lines (none can be added this
 * session, either).
 *
 * describe() itself lives beside errors.ts (src/describe.ts), below this module: the error
 * class describes a bad code with it, and this module re-exports it.
 */
export { isAbortSignal, isArray, isUint8Array } from './brand-checks.ts';
export { checkBytes, requireBytes, sharedCopies } from './bytes.ts';
export { describe } from '../describe.ts';
export { MAX_TIMER_MS, optionalInteger, requireInteger, requireTimerMs } from './numbers.ts';
export { isPlainObject, optionalOptions, readArray, rejectUnknownKeys, requireObject } from './options-object.ts';
export { requireStringMap } from './string-map.ts';
export {
  MAX_NAME_LENGTH,
  isWellFormed,
  optionalName,
  optionalText,
  requireName,
  requireNames,
  requireOneOf,
  requirePath,
  requireWellFormed,
} from './text.ts';
export { optionalFunction, optionalSignal, orDefault, requireBoolean, requireFunction, requireSignal } from './values.ts';
