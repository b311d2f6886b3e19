/**
 * kafkajs errors -> runlog error codes, and the kafkajs logger runlog installs.
 *
 * kafkajs wraps the protocol error it got in retry errors (KafkaJSNonRetriableError,
 * KafkaJSNumberOfRetriesExceeded) through `cause`, so the mapping walks that chain:
 *   INVALID_PRODUCER_EPOCH (47), INVALID_TXN_STATE (48), INVALID_PRODUCER_ID_MAPPING (49),
 *   PRODUCER_FENCED (90; kafkajs does not know it by name) -> Fenced (never retriable)
 *   MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE -> InvalidArgument
 *   connection, timeout, no broker, anything else -> LogUnavailable (retriable)
 */
import { RunlogError, isRunlogError } from '../../errors.ts';
import type { logCreator, LogEntry } from 'kafkajs';

/**
 * INVALID_TXN_STATE counts as fencing too: with transaction verification (Kafka 3.6+), a
 * Produce whose transaction the coordinator already aborted (because a new writer's
 * InitProducerId bumped the epoch, or the transaction timed out) gets INVALID_TXN_STATE
 * instead of INVALID_PRODUCER_EPOCH. Either way this producer's session is over, and
 * re-initialising it automatically could fence the partition's new owner.
 */
const FENCED_TYPES = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'INVALID_PRODUCER_ID_MAPPING', 'INVALID_TXN_STATE']);
const FENCED_CODES = new Set([47, 48, 49, 90]);
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

const STALE_LEADER_TYPES = new Set(['NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION']);

/** The client's metadata named the wrong (or no) leader: refreshing it and asking again helps. */
export function isStaleLeaderError(error: unknown): boolean {
  return [...STALE_LEADER_TYPES].some((type) => hasErrorType(error, type));
}

/** Whether kafkajs reported `type` anywhere in the error: its causes, or the errors an aggregate error holds. */
export function hasErrorType(error: unknown, type: string): boolean {
  return chain(error).some(
    (e) => e.type === type || ((e as { errors?: unknown[] }).errors ?? []).some((inner) => hasErrorType(inner, type)),
  );
}

export function isFencingError(error: unknown): boolean {
  return chain(error).some(
    (e) => (e.type !== undefined && FENCED_TYPES.has(e.type)) || (typeof e.code === 'number' && FENCED_CODES.has(e.code)),
  );
}

function innermostMessage(error: unknown): string {
  const all = chain(error);
  return (
    all
      .map((e) => e.message)
      .filter((m) => m !== undefined && m !== '')
      .join(': caused by: ') || String(error)
  );
}

/** Maps any error thrown by kafkajs to a RunlogError; RunlogErrors pass through unchanged. */
export function toRunlogError(error: unknown, what: string): RunlogError {
  if (isRunlogError(error)) return error;
  const detail = innermostMessage(error);
  if (isFencingError(error)) {
    const why = 'another writer took over this partition, or the broker aborted the transaction';
    return new RunlogError('Fenced', `${what}: ${why} (${detail})`, { cause: error });
  }
  if (chain(error).some((e) => e.type !== undefined && TOO_LARGE_TYPES.has(e.type))) {
    return new RunlogError('InvalidArgument', `${what}: the batch is larger than the broker accepts (${detail})`, { cause: error });
  }
  return new RunlogError('LogUnavailable', `${what}: Kafka failed: ${detail}`, { cause: error });
}

/** Messages kafkajs logs at ERROR for conditions runlog handles or reports itself. */
const EXPECTED = [
  /CONCURRENT_TRANSACTIONS/i,
  /concurrent operation on the same transaction/i,
  /producer epoch/i,
  /fenced/i,
  /There is an ongoing transaction/i,
  /old epoch/i,
  /transactional operation in an invalid state/i,
  /The group is rebalancing/i,
  /Restarting the consumer/i,
];

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
