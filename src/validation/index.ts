/**
 * runlog's argument checks, one module for every layer (log, queue, worker, cli): bad input
 * is a RunlogError('InvalidArgument') naming the value as describe() shows it; nothing is
 * written. Hand-written small functions, no schema library: the submit path runs them on
 * every call, and each reads a value once and never runs the caller's code (see
 * options-object.ts and brand-checks.ts).
 *
 * errors.ts and describe.ts sit below this index (errors.ts imports describe.ts directly).
 */
export { isAbortSignal, isArray, isUint8Array } from './brand-checks.ts';
export {
  MAX_TIMER_MS,
  optionalInteger,
  optionalName,
  optionalOptions,
  optionalSignal,
  optionalText,
  orDefault,
  requireBytes,
  requireInteger,
  requireName,
  requireNames,
  requireObject,
  requireOneOf,
  requireStringMap,
  requireTimerMs,
  requireWellFormed,
} from './checks.ts';
export { describe } from './describe.ts';
export { isPlainObject, readArray, readObject, rejectUnknownKeys } from './options-object.ts';
export { isWellFormed } from './well-formed.ts';
