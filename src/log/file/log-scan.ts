/**
 * Scanning a whole file log on open (every partition, recovery.ts), and the repairs the
 * scan plans: made by a writable open once every partition scanned cleanly, only reported
 * by a read-only one.
 */
import { open, rename, rm } from 'node:fs/promises';
import { invalidArgument } from '../../errors.ts';
import type { RunlogWarning, WarningListener } from '../../warnings.ts';
import { META_FILE, checkPartitionDirs, identityOf, partitionDir, writeMeta, type LogDescription } from './log-meta.ts';
import { scanPartition, type PartitionScan, type Repair, type ScanOptions } from './recovery.ts';
import { syncDir } from './sync.ts';

export function checkPartitionsAsked(dir: string, description: LogDescription, asked: number | undefined): void {
  if (asked !== undefined && asked !== description.partitions) {
    throw invalidArgument(`${dir} holds a log of ${description.partitions} partitions, not ${asked}`);
  }
}

/** Every partition scanned (Corrupt unless whole); on failure the segments scanned so far are let go. */
export async function scanLog(dir: string, description: LogDescription, options: ScanOptions): Promise<PartitionScan[]> {
  await checkPartitionDirs(dir, description.partitions);
  const scans: PartitionScan[] = [];
  try {
    for (let p = 0; p < description.partitions; p++)
      scans.push(await scanPartition(partitionDir(dir, p), identityOf(description, p), options));
    return scans;
  } catch (error) {
    await Promise.all(scans.flatMap((scan) => scan.segments.map((segment) => segment.retire())));
    throw error;
  }
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
