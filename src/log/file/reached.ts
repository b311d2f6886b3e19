/**
 * The "reached" records: how far each partition of a file log is known to have reached,
 * kept outside the partition, so that a partition cut back or rolled back is refused
 * rather than opened as a shorter log (which would read a closed entry as open again and
 * reissue acknowledged ticket ids).
 *
 * Nothing inside a partition can tell that its last segment lost whole frames at its end
 * (recovery.ts proves the segments chain and the last one's frames whole, but a cut at a frame
 * boundary leaves a valid, shorter log), or that the partition directory was replaced by
 * an older copy. So next to log.json each partition p has `reached-<p>.json`:
 *
 *   { "logId": "<log id>", "partition": p, "end": "<end offset reached>",
 *     "clean": { "segment": "<base>", "bytes": <size>, "lastFrame": <byte> } }
 *
 * `clean` is written by a clean close only (every append durable, the writer sound), and
 * dropped by the next refresh: where that close left the active segment, so that the next
 * open need not read the segment's frames to prove them (recovery.ts: CLEAN CLOSE).
 *
 * written atomically (a temporary file written and fsynced, renamed over it, the
 * directory fsynced) at a clean close, and refreshed in the background at most every
 * REACHED_REFRESH_MS while appends happen. It only ever names an end that is durable (the
 * writer reports an end after its datasync), so a crash's torn tail, which can only be a
 * frame written after that end, is still cut, and the cut never takes the log below the
 * record. It is never on the commit path: no append waits for it, and a failure to write
 * it is a warning (RUNLOG_REACHED_RECORD), not a failed append or close.
 *
 * Every open (the writer's and a read-only one) reads the records before scanning, and a
 * partition whose end is below its record is Corrupt, naming the partition, the recorded
 * end and the end found; nothing is cut or written. A record naming another partition, or
 * one that does not parse, is Corrupt too. A missing record, or one naming another log id
 * (left by a log no longer there), checks nothing (a log created before records existed,
 * or never closed nor refreshed yet); this log's first record replaces it.
 *
 * What remains undetectable:
 * - losing (cutting back) what was appended after the last refresh: at most
 *   REACHED_REFRESH_MS of appends before a crash, or anything when the record is deleted;
 * - a rollback of the partition together with its record, e.g. the whole log directory
 *   restored from an older backup;
 * - with `fsync: false` no record is written (nothing is known to be durable), so only a
 *   record left by an earlier fsynced session is checked.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunlogError } from '../../errors.ts';
import { sleep } from '../../retry.ts';
import { describe } from '../../validation/index.ts';
import type { WarningListener } from '../../warnings.ts';
import type { LogDescription } from './log-meta.ts';
import type { Segment } from './segment.ts';
import { syncDir } from './sync.ts';

/** An offset as a record writes it: decimal digits, no leading zero. */
const OFFSET_TEXT = /^(0|[1-9][0-9]*)$/;

/** The background refresh's period: at most this many ms of appends are past the record. */
export const REACHED_REFRESH_MS = 1000;

export function reachedPath(dir: string, partition: number): string {
  return join(dir, `reached-${partition}.json`);
}

/**
 * How a partition was left by a clean close: its active segment (by base) ended after `bytes`
 * bytes of header and whole frames, the last of them starting at byte `lastFrame` (equal to
 * `bytes` when it held no frame). See recovery.ts: CLEAN CLOSE.
 */
export interface CleanClose {
  segment: bigint;
  bytes: number;
  lastFrame: number;
}

/** A partition's record: the end it reached, and how its close left it if that close was clean. */
export interface Reached {
  end: bigint;
  clean: CleanClose | null;
}

/** The record of each partition (null: no record). */
export async function readReached(dir: string, description: LogDescription): Promise<(Reached | null)[]> {
  const records: (Reached | null)[] = [];
  for (let p = 0; p < description.partitions; p++) records.push(await readOne(reachedPath(dir, p), description.logId, p));
  return records;
}

async function readOne(path: string, logId: string, partition: number): Promise<Reached | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const bad = (what: string): RunlogError =>
    new RunlogError('Corrupt', `${path} is not a record of how far partition ${partition} reached: ${what}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw bad(text.trim() === '' ? 'it is empty' : (error as Error).message);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(`it holds ${describe(value)}`);
  const record = value as Record<string, unknown>;
  // A record of another log was left by a log no longer here (one created afresh over an
  // interrupted creation): it says nothing about this one, and this log's first record replaces it.
  if (typeof record['logId'] === 'string' && /^[0-9a-f]{32}$/.test(record['logId']) && record['logId'] !== logId) return null;
  if (record['logId'] !== logId) throw bad(`logId ${describe(record['logId'])} is not 32 hex digits`);
  if (record['partition'] !== partition) throw bad(`it names partition ${describe(record['partition'])}`);
  const end = record['end'];
  if (typeof end !== 'string' || !OFFSET_TEXT.test(end)) throw bad(`end ${describe(end)} is not an offset`);
  return { end: BigInt(end), clean: cleanOf(record['clean'], bad) };
}

/** A record's `clean` (absent: the partition was not left by a clean close since it was last written). */
function cleanOf(clean: unknown, bad: (what: string) => RunlogError): CleanClose | null {
  if (clean === undefined) return null;
  if (typeof clean !== 'object' || clean === null || Array.isArray(clean)) throw bad(`clean ${describe(clean)} is not an object`);
  const { segment, bytes, lastFrame } = clean as Record<string, unknown>;
  if (typeof segment !== 'string' || !OFFSET_TEXT.test(segment)) throw bad(`clean.segment ${describe(segment)} is not an offset`);
  if (!Number.isSafeInteger(bytes) || (bytes as number) < 0) throw bad(`clean.bytes ${describe(bytes)} is not a byte count`);
  if (!Number.isSafeInteger(lastFrame) || (lastFrame as number) < 0 || (lastFrame as number) > (bytes as number))
    throw bad(`clean.lastFrame ${describe(lastFrame)} is not a byte position within clean.bytes`);
  return { segment: BigInt(segment), bytes: bytes as number, lastFrame: lastFrame as number };
}

/**
 * Corrupt unless every partition's end (as it will be after the scan's repairs: recovery.ts
 * PartitionScan) is at or past its recorded end. On failure the scanned segments are let go.
 */
export async function checkReached(
  dir: string,
  recorded: readonly (Reached | null)[],
  scans: readonly { segments: readonly Segment[] }[],
): Promise<void> {
  for (const [p, scan] of scans.entries()) {
    const end = recorded[p]?.end;
    const found = scan.segments.at(-1)!.endOffset;
    if (end === null || end === undefined || found >= end) continue;
    await Promise.all(scans.flatMap((s) => s.segments.map((segment) => segment.retire())));
    throw new RunlogError(
      'Corrupt',
      `${dir}: partition ${p} ends at offset ${found}, but ${reachedPath(dir, p)} records that it reached ${end}: records were cut from its end or the partition was rolled back (refusing to open a shorter log)`,
    );
  }
}

/** Writes partition `partition`'s record atomically (temporary file, fsync, rename, directory fsync). */
export async function writeReached(
  dir: string,
  logId: string,
  partition: number,
  end: bigint,
  clean: CleanClose | null = null,
): Promise<void> {
  const path = reachedPath(dir, partition);
  const temporary = `${path}.tmp`;
  const record = { logId, partition, end: end.toString(), ...(clean && { clean: { ...clean, segment: clean.segment.toString() } }) };
  await writeFile(temporary, JSON.stringify(record) + '\n', { flush: true });
  await rename(temporary, path);
  await syncDir(dir);
}

/** What a recorder needs of its partition. */
export interface ReachedSource {
  /** The end offset the partition's writer has made durable. */
  readonly endOffset: bigint;
  /** Resolves once a record at or after `offset` is committed, or the signal aborts. */
  appended(offset: bigint, signal: AbortSignal): Promise<void>;
}

/**
 * Keeps one partition's record current: after an append, waits REACHED_REFRESH_MS, then
 * records the durable end; at most one write at a time, so records only move forward.
 */
export class ReachedRecorder {
  readonly #dir: string;
  readonly #logId: string;
  readonly #partition: number;
  readonly #source: ReachedSource;
  readonly #onWarning: WarningListener;
  readonly #checkLock: () => void;
  readonly #stop = new AbortController();
  #recorded: bigint;
  /** The clean close the record names now (null: none). */
  #recordedClean: CleanClose | null;
  readonly #loop: Promise<void>;

  /**
   * `recorded`: the partition's record now (null: it has none). `checkLock` throws once this
   * process no longer holds the log (a record is then written no more).
   */
  constructor(
    dir: string,
    logId: string,
    partition: number,
    recorded: Reached | null,
    source: ReachedSource,
    onWarning: WarningListener,
    checkLock: () => void,
  ) {
    this.#dir = dir;
    this.#logId = logId;
    this.#partition = partition;
    this.#source = source;
    this.#onWarning = onWarning;
    this.#checkLock = checkLock;
    this.#recorded = recorded?.end ?? -1n;
    this.#recordedClean = recorded?.clean ?? null;
    this.#loop = this.#refreshLoop();
  }

  async #refreshLoop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      await this.#source.appended(this.#recorded, signal); // past the recorded end
      if (signal.aborted) return;
      await sleep(REACHED_REFRESH_MS, { signal, ref: false }).catch(() => undefined); // an abort ends it: stopped
      if (signal.aborted) return;
      await this.#record();
    }
  }

  /** Records the durable end (and `clean`, at a clean close) unless the record says so already. */
  async #record(clean: CleanClose | null = null): Promise<void> {
    const end = this.#source.endOffset;
    if (end <= this.#recorded && sameClean(clean, this.#recordedClean)) return;
    try {
      this.#checkLock();
      await writeReached(this.#dir, this.#logId, this.#partition, end, clean);
      this.#recorded = end;
      this.#recordedClean = clean;
    } catch (error) {
      this.#onWarning({
        code: 'RUNLOG_REACHED_RECORD',
        message: `${reachedPath(this.#dir, this.#partition)}: recording that partition ${this.#partition} reached offset ${end} failed: ${String(error)}`,
      });
    }
  }

  /**
   * Stops the refreshes and, once the writer is closed (every append durable), records the
   * final end, and `clean`: how a clean close left the active segment (null: the close was not clean).
   */
  async close(clean: CleanClose | null): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    await this.#record(clean);
  }
}

function sameClean(a: CleanClose | null, b: CleanClose | null): boolean {
  if (a === null || b === null) return a === b;
  return a.segment === b.segment && a.bytes === b.bytes && a.lastFrame === b.lastFrame;
}
