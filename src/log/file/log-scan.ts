/**
 * Scanning a whole file log on open (every partition, recovery.ts), and the repairs the
 * scan plans: made by a writable open once every partition scanned cleanly, only reported
 * by a read-only one.
 */
import { open, rename, rm } from 'node:fs/promises';
import { invalidArgument } from '../../errors.ts';
import type { RunlogWarning, WarningListener } from '../../warnings.ts';
import { META_FILE, checkPartitionDirs, identityOf, partitionDir, writeMeta, type LogDescription } from './log-meta.ts';
import type { Reached } from './reached.ts';
import { scanPartition, type PartitionScan, type Repair, type ScanOptions } from './recovery.ts';
import { syncDir } from './sync.ts';

export function checkPartitionsAsked(dir: string, description: LogDescription, asked: number | undefined): void {
  if (asked !== undefined && asked !== description.partitions) {
    throw invalidArgument(`${dir} holds a log of ${description.partitions} partitions, not ${asked}`);
  }
}

/**
 * Partitions scanned at once: while one partition's chunk is CRC-checked on this thread, the
 * others' reads run on libuv's threads (as many as these, by default).
 */
const SCANS_AT_ONCE = 4;

/**
 * Every partition scanned (Corrupt unless whole), SCANS_AT_ONCE at a time; on failure the
 * segments scanned are let go, and the error is the lowest failing partition's (the one a scan
 * in partition order would meet first: every partition is scanned to the end before it is told).
 * `reached`: the partitions' reached records (a clean close spares reading an active segment).
 */
export async function scanLog(
  dir: string,
  description: LogDescription,
  options: ScanOptions,
  reached: readonly (Reached | null)[],
): Promise<PartitionScan[]> {
  await checkPartitionDirs(dir, description.partitions);
  const results = new Array<PromiseSettledResult<PartitionScan>>(description.partitions);
  let next = 0;
  const scanNext = async (): Promise<void> => {
    for (let p = next++; p < description.partitions; p = next++) {
      results[p] = await scanPartition(partitionDir(dir, p), identityOf(description, p), options, reached[p] ?? null).then(
        (value) => ({ status: 'fulfilled', value }),
        (reason: unknown) => ({ status: 'rejected', reason }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(SCANS_AT_ONCE, description.partitions) }, scanNext));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed === undefined) return results.map((result) => (result as PromiseFulfilledResult<PartitionScan>).value);
  await Promise.all(
    results.flatMap((result) => (result.status === 'fulfilled' ? result.value.segments.map((segment) => segment.retire()) : [])),
  );
  throw failed.reason;
}

export function warningOf(repair: Repair): RunlogWarning {
  return { code: repair.kind === 'truncate' ? 'RUNLOG_TORN_TAIL' : 'RUNLOG_LOG_REPAIRED', message: repair.message };
}

export async function applyRepairs(dir: string, scans: PartitionScan[], onWarning: WarningListener): Promise<void> {
  for (const [p, scan] of scans.entries()) {
    for (const repair of scan.repairs) {
      onWarning(warningOf(repair));
      await applyRepair(repair);
    }
    if (scan.repairs.length > 0) await syncDir(partitionDir(dir, p));
  }
}

async function applyRepair(repair: Repair): Promise<void> {
  if (repair.kind === 'remove') return rm(repair.path, { force: true });
  if (repair.kind === 'publish') return rename(repair.from, repair.to);
  const handle = await open(repair.path, 'r+');
  try {
    await handle.truncate(repair.size);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function restoreMeta(dir: string, description: LogDescription, onWarning: WarningListener): Promise<void> {
  const { logId, partitions } = description;
  onWarning({
    code: 'RUNLOG_LOG_REPAIRED',
    message: `${dir}: ${META_FILE} was missing; restored from the partitions' segment headers (log ${logId}, ${partitions} partitions)`,
  });
  await writeMeta(dir, description);
}
