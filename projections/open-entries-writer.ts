/**
 * A snapshot's open entries written straight from the view's entries (EntryState) into the
 * snapshot's buffer: the bytes the compiled writer (src/events/body-writer.ts) writes for the
 * state's `threads` field (schemas/snapshots/PartitionState.v1.avsc: an array of Thread, each
 * an array of Entry), without building an object per entry and per attempt first (entryOf in
 * open-snapshot.ts builds them, for avsc and the tools). Every value goes through the same
 * checked writers, so it declines (-1) exactly where the compiled writer would, and the codec
 * then encodes the values the slow way. test/projector/open-entries-writer.test.ts holds it
 * to the compiled writer's bytes.
 *
 * Fields are written in the schema's order; a union ["null", T] is its branch index as a
 * long (0: null; 1: then the value).
 */
import {
  MAX_VARINT_BYTES,
  noRoom,
  writeBytes,
  writeInt,
  writeLong,
  writeString,
  writeStringMap,
  writeVarint,
} from '../src/events/body-writer.ts';
import type { EntryState } from './entry-state.ts';

/** A thread with open entries, head first (ThreadState.openEntries). */
export interface OpenThread {
  tenant: string;
  thread: string;
  open: readonly EntryState[];
}

/** The `threads` array: one block of every thread, then 0. The end position, or -1 if declined. */
export function writeOpenThreads(threads: readonly OpenThread[], buf: Buffer, pos: number): number {
  if (threads.length > 0) {
    if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
    pos = writeVarint(threads.length, buf, pos);
    for (const { tenant, thread, open } of threads) {
      pos = writeString(tenant, buf, pos);
      if (pos >= 0) pos = writeString(thread, buf, pos);
      if (pos >= 0) pos = writeEntries(open, buf, pos);
      if (pos < 0) return -1;
    }
  }
  return writeEnd(buf, pos);
}

function writeEntries(open: readonly EntryState[], buf: Buffer, pos: number): number {
  if (open.length > 0) {
    if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
    pos = writeVarint(open.length, buf, pos);
    for (let i = 0; i < open.length; i++) {
      pos = writeEntry(open[i]!, buf, pos);
      if (pos < 0) return -1;
    }
  }
  return writeEnd(buf, pos);
}

/** An array's or map's last (empty) block. */
export function writeEnd(buf: Buffer, pos: number): number {
  if (pos >= buf.length) return noRoom();
  buf[pos] = 0;
  return pos + 1;
}

/** One Entry record, from the entry's fields as entryOf reads them. */
export function writeEntry(entry: EntryState, buf: Buffer, pos: number): number {
  pos = writeString(entry.entryId, buf, pos);
  if (pos >= 0) pos = writeLong(entry.seq, buf, pos);
  if (pos >= 0) pos = writeString(entry.agent, buf, pos);
  if (pos >= 0) pos = writeBytes(entry.input, buf, pos);
  if (pos >= 0) pos = writeNullOr(writeString, entry.key, buf, pos);
  if (pos >= 0) pos = writeInt(entry.priority, buf, pos);
  if (pos >= 0) pos = writeNullOr(writeLong, entry.deadline, buf, pos);
  if (pos >= 0) pos = writeInt(entry.maxAttempts, buf, pos);
  if (pos >= 0) pos = writeStringMap(entry.metadata, buf, pos);
  if (pos >= 0) pos = writeLong(entry.submittedAt, buf, pos);
  if (pos >= 0) pos = writeLong(entry.submittedOffset, buf, pos);
  if (pos < 0) return -1;
  const waiting = writeWaitingTail(entry, buf, pos);
  return waiting >= 0 ? waiting : writeTail(entry, buf, pos);
}

/** Room for a waiting entry's tail (writeWaitingTail): two longs at most, and nine one-byte fields. */
const WAITING_TAIL_BYTES = 2 * MAX_VARINT_BYTES + 9;

/**
 * The tail of an entry waiting for its first lease (most of a backlog: no notBefore, lease,
 * attempt or close) written at once: the bytes writeTail writes for it. -1 for any other entry,
 * any other value, or too little room, and nothing said of it (no noRoom): writeTail then
 * writes or declines the entry as always.
 */
function writeWaitingTail(entry: EntryState, buf: Buffer, pos: number): number {
  const { lastEpoch, deferredAttempts } = entry;
  if (entry.notBefore !== null || entry.lease !== null || entry.attempts.length !== 0 || entry.outcome !== null) return -1;
  if (entry.result !== null || entry.error !== null || entry.closedAt !== null) return -1;
  if (!Number.isSafeInteger(lastEpoch) || deferredAttempts !== (deferredAttempts | 0) || pos + WAITING_TAIL_BYTES > buf.length) return -1;
  buf[pos++] = 0; // notBefore: null
  buf[pos++] = 0; // lease: null
  pos = writeVarint(lastEpoch, buf, pos);
  pos = writeVarint(deferredAttempts, buf, pos);
  buf[pos++] = 0; // attempts: none
  buf[pos++] = 0; // outcome: null
  buf[pos++] = 0; // result: null
  buf[pos++] = 0; // error: null
  buf[pos++] = 0; // closedAt: null
  return pos;
}

/** The fields after submittedOffset, each through its checked writer. */
function writeTail(entry: EntryState, buf: Buffer, pos: number): number {
  pos = writeNullOr(writeLong, entry.notBefore, buf, pos);
  if (pos >= 0) pos = writeLease(entry, buf, pos);
  if (pos >= 0) pos = writeLong(entry.lastEpoch, buf, pos);
  if (pos >= 0) pos = writeInt(entry.deferredAttempts, buf, pos);
  if (pos >= 0) pos = writeAttempts(entry, buf, pos);
  if (pos >= 0) pos = writeNullOr(writeString, entry.outcome, buf, pos);
  if (pos >= 0) pos = writeNullOr(writeBytes, entry.result, buf, pos);
  if (pos >= 0) pos = writeNullOr(writeString, entry.error, buf, pos);
  if (pos >= 0) pos = writeNullOr(writeLong, entry.closedAt, buf, pos);
  return pos;
}

/** A union ["null", T]: 0, or 1 and the value (undefined declines, as the compiled writer's union does). */
function writeNullOr(write: (value: unknown, buf: Buffer, pos: number) => number, value: unknown, buf: Buffer, pos: number): number {
  if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
  if (value === null) return writeVarint(0, buf, pos);
  if (value === undefined) return -1;
  return write(value, buf, writeVarint(1, buf, pos));
}

function writeLease(entry: EntryState, buf: Buffer, pos: number): number {
  const lease = entry.lease;
  if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
  if (lease === null) return writeVarint(0, buf, pos);
  if (typeof lease !== 'object') return -1;
  pos = writeString(lease.holder, buf, writeVarint(1, buf, pos));
  if (pos >= 0) pos = writeLong(lease.epoch, buf, pos);
  if (pos >= 0) pos = writeLong(lease.expiresAt, buf, pos);
  return pos;
}

/** The attempts, each with its record's offset (attemptOffsets, as entryOf pairs them). */
function writeAttempts(entry: EntryState, buf: Buffer, pos: number): number {
  const { attempts, attemptOffsets } = entry;
  if (attempts.length > 0) {
    if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
    pos = writeVarint(attempts.length, buf, pos);
    for (let n = 0; n < attempts.length && pos >= 0; n++) {
      const attempt = attempts[n]!;
      pos = writeString(attempt.runId, buf, pos);
      if (pos >= 0) pos = writeInt(attempt.attempt, buf, pos);
      if (pos >= 0) pos = writeLong(attempt.epoch, buf, pos);
      if (pos >= 0) pos = writeLong(attempt.startedAt, buf, pos);
      if (pos >= 0) pos = writeLong(attemptOffsets[n], buf, pos);
    }
    if (pos < 0) return -1;
  }
  return writeEnd(buf, pos);
}
