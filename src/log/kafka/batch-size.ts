/**
 * How big runlog's record batches on Kafka get, and the record limits that follow.
 *
 * The broker refuses a record batch larger than the topic's max.message.bytes (the whole
 * batch, header included: MESSAGE_TOO_LARGE). One produce request carries one batch per
 * partition (transactional-producer.ts), so the writer splits a transaction's records into
 * batches that each fit (splitBatches); a record that cannot fit a batch alone is refused by
 * append before anything is sent (the log's maxRecordBytes).
 *
 * Sizes, as kafkajs 2.2 encodes a magic-v2 batch without compression:
 *   batch header   61 bytes (base offset, length, leader epoch, magic, CRC, attributes,
 *                  last offset delta, two timestamps, producer id and epoch, base sequence,
 *                  record count)
 *   per record     at most 32 bytes besides key and value: length varint (5), attributes (1),
 *                  timestamp delta varlong (10), offset delta varint (5), key and value
 *                  length varints (5 + 5), header count (1; runlog sends no headers)
 */
import type { RecordLimits } from '../event-log.ts';
import type { ProducedMessage } from './transactional-producer.ts';

const BATCH_OVERHEAD_BYTES = 61;
const RECORD_OVERHEAD_BYTES = 32;
/** Never a batch larger than this, whatever the topic allows: a produce request must stay within the broker's socket.request.max.bytes (default 100 MiB). */
const MAX_PRODUCED_BATCH_BYTES = 64 << 20;

/** The largest batch this writer sends to a topic with `maxMessageBytes`. */
export function batchBytesFor(maxMessageBytes: number): number {
  return Math.min(maxMessageBytes, MAX_PRODUCED_BATCH_BYTES);
}

/**
 * The log's limits on a topic with `maxMessageBytes`: a record must fit a batch alone; an
 * append is split into as many batches as it needs, all in one transaction, so it has no
 * limit of its own.
 */
export function kafkaRecordLimits(maxMessageBytes: number): RecordLimits {
  const maxRecordBytes = Math.max(0, batchBytesFor(maxMessageBytes) - BATCH_OVERHEAD_BYTES - RECORD_OVERHEAD_BYTES);
  return { maxRecordBytes, maxAppendBytes: Number.POSITIVE_INFINITY };
}

function messageBytes(message: ProducedMessage): number {
  return Buffer.byteLength(message.key) + (message.value?.length ?? 0) + RECORD_OVERHEAD_BYTES;
}

/** Splits `messages`, in order, into batches of at most `batchBytes` each (a message too big alone still gets a batch: the broker refuses it). */
export function splitBatches(messages: readonly ProducedMessage[], batchBytes: number): ProducedMessage[][] {
  const batches: ProducedMessage[][] = [];
  let current: ProducedMessage[] = [];
  let bytes = BATCH_OVERHEAD_BYTES;
  for (const message of messages) {
    const size = messageBytes(message);
    if (current.length > 0 && bytes + size > batchBytes) {
      batches.push(current);
      current = [];
      bytes = BATCH_OVERHEAD_BYTES;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
