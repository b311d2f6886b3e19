/**
 * kafkajs errors -> runlog error codes, and the kafkajs logger runlog installs.
 *
 * kafkajs wraps the protocol error it got in retry errors (KafkaJSNonRetriableError,
 * KafkaJSNumberOfRetriesExceeded) through `cause`, so the mapping walks that chain:
 *   INVALID_PRODUCER_EPOCH (47), PRODUCER_FENCED (90; kafkajs does not know it by name),
 *   TRANSACTIONAL_ID_... fencing             -> Fenced (never retriable: another writer owns the partition)
 *   MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE -> InvalidArgument
 *   connection, timeout, no broker, anything else -> LogUnavailable (retriable)
 */
import { RunlogError, isRunlogError } from '../../errors.ts';
import type { logCreator, LogEntry } from 'kafkajs';

const FENCED_TYPES = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'INVALID_PRODUCER_ID_MAPPING']);
const FENCED_CODES = new Set([47, 49, 90]);
const TOO_LARGE_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

interface KafkaJsErrorShape {
  name?: string;
  type?: string;
  code?: unknown;
  message?: string;
  cause?: unknown;
}

/** The error and every error it was caused by, outermost first. */
function chain(error: unknown): KafkaJsErrorShape[] {
  const out: KafkaJsErrorShape[] = [];
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && out.length < 10 && !out.includes(current)) {
    out.push(current as KafkaJsErrorShape);
    current = (current as KafkaJsErrorShape).cause;
  }
  return out;
}

export function isFencingError(error: unknown): boolean {
  return chain(error).some((e) => (e.type !== undefined && FENCED_TYPES.has(e.type)) || (typeof e.code === 'number' && FENCED_CODES.has(e.code)));
}

function innermostMessage(error: unknown): string {
  const all = chain(error);
  return all.map((e) => e.message).filter((m) => m !== undefined && m !== '').join(': caused by: ') || String(error);
}

/** Maps any error thrown by kafkajs to a RunlogError; RunlogErrors pass through unchanged. */
export function toRunlogError(error: unknown, what: string): RunlogError {
  if (isRunlogError(error)) return error;
  const detail = innermostMessage(error);
  if (isFencingError(error)) {
    return new RunlogError('Fenced', `${what}: another writer took over this partition (${detail})`, { cause: error });
  }
  if (chain(error).some((e) => e.type !== undefined && TOO_LARGE_TYPES.has(e.type))) {
    return new RunlogError('InvalidArgument', `${what}: the batch is larger than the broker accepts (${detail})`, { cause: error });
  }
  return new RunlogError('LogUnavailable', `${what}: Kafka failed: ${detail}`, { cause: error });
}

/** Messages kafkajs logs at ERROR for conditions runlog handles or reports itself. */
const EXPECTED = [/CONCURRENT_TRANSACTIONS/i, /concurrent operation on the same transaction/i, /producer epoch/i, /fenced/i,
  /There is an ongoing transaction/i, /old epoch/i, /The group is rebalancing/i, /Restarting the consumer/i];

/**
 * kafkajs logs a lot, and at ERROR for things it retries (a back-to-back transaction's
 * CONCURRENT_TRANSACTIONS) or that runlog turns into its own errors (fencing). This logger
 * prints only errors runlog does not already handle, to stderr, once per message text.
 */
export const quietLogCreator: logCreator = () => {
  const seen = new Set<string>();
  return ({ namespace, log }: LogEntry) => {
    const message = String(log.message ?? '');
    // "Response <Api>" lines are protocol errors kafkajs then retries or throws (to us).
    if (namespace === 'Connection' && message.startsWith('Response ')) return;
    if (EXPECTED.some((re) => re.test(message)) || seen.has(message)) return;
    if (seen.size < 1000) seen.add(message);
    process.stderr.write(`[runlog kafka] ${namespace}: ${message}\n`);
  };
};
