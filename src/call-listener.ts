/**
 * Calling a caller's listener (onWork, onWarning, a worker's onEvent or logger) so that its
 * failure never breaks what called it. A listener may be an async function: its failure is
 * then not a throw but the rejection of the promise it returns, which, left alone, is an
 * unhandled rejection that ends the process. Both go to `onFailure`.
 */
import { types } from 'node:util';

export function callListener<A extends unknown[]>(listener: (...args: A) => unknown, args: A, onFailure: (error: unknown) => void): void {
  let answer: unknown;
  try {
    answer = listener(...args);
  } catch (error) {
    onFailure(error);
    return;
  }
  catchRejection(answer, onFailure);
}

/**
 * When `value` is a promise, its rejection goes to `onFailure` rather than being left
 * unhandled. Only a native promise is recognized: reading `then` of any other object could
 * run the caller's code (a getter, a proxy trap).
 */
export function catchRejection(value: unknown, onFailure: (error: unknown) => void): void {
  if (!types.isPromise(value)) return;
  const report = (error: unknown): void => {
    try {
      onFailure(error);
    } catch {
      // onFailure is runlog's own reporting; nothing is left to tell.
    }
  };
  try {
    Promise.prototype.then.call(value, undefined, report);
  } catch (error) {
    report(error); // a promise whose `constructor` getter throws
  }
}
