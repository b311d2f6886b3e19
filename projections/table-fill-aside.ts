/**
 * The ticket index's tables filled on a thread of their own while the main thread loads a large
 * snapshot's columns (src/projector/snapshots.ts sourcedView). Loading the columns and filling
 * the three tables of hashes (each sorted into place: row-table.ts) take about as long each
 * (10M closed tickets, 2026-12-07: the tables ~1.4 s of the index's ~3 s), and need nothing of
 * each other but the snapshot's bytes, which the thread reads from the file itself.
 *
 * The tables come back as their slots (transferred); TicketIndex.adoptTables checks that they
 * hold its rows' counts, or fills them itself. Rows the thread read wrong could only cost
 * lookups (a hit is always checked against the row), and the file is the one the checksum
 * covers; it must stay open until the thread is gone (`tables` settled, or `cancel`).
 */
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SourcedColumn } from '../src/events/snapshot-stream.ts';
import { RowTable, type FilledTable } from './row-table.ts';
import type { IndexTables } from './table-fill.ts';

/**
 * An index of fewer rows fills its tables itself: a thread takes tens of ms to start (~0.3 s
 * under tsx, which registers its loader and compiles the modules in it), and 1M rows' tables
 * take ~0.15 s.
 * Changeable for tests; `threadsStarted` counts the threads started, `threadsRunning` those not
 * done yet: at most one fewer than the cores (a queue opens its partitions at once; the rest fill
 * their own tables).
 */
export const TABLES_ASIDE = { minRows: 1_000_000, threadsStarted: 0, threadsRunning: 0 };

/** Where a column the tables hash lies in the snapshot's file. */
export interface FileColumn {
  position: number;
  byteLength: number;
}

export interface AsideColumns {
  seq: FileColumn;
  state: FileColumn;
  keyHash: FileColumn;
  attemptsEnd: FileColumn;
  runHash: FileColumn;
}

export interface TablesAside {
  /** The tables, or null when the thread failed (the index then fills them itself). */
  readonly tables: Promise<IndexTables | null>;
  /** Stops the thread if it still runs; resolves once it is gone (the file may then be closed). */
  cancel(): Promise<void>;
}

/**
 * Starts filling the tables of the index `columns` describe (a snapshot's closedIndex in the file
 * open as `fd`) on a thread of its own; null when it would not pay (fewer than `minRows` rows, no
 * core left: see TABLES_ASIDE) or the columns are not all there (the load reports what is wrong).
 */
export function fillTablesAside(fd: number, columns: readonly SourcedColumn[], minRows = TABLES_ASIDE.minRows): TablesAside | null {
  const found = asideColumns(columns);
  if (found === null || found.seq.byteLength / 8 < minRows || TABLES_ASIDE.threadsRunning >= availableParallelism() - 1) return null;
  const worker = startWorker({ fd, columns: found });
  if (worker === null) return null;
  TABLES_ASIDE.threadsStarted++;
  TABLES_ASIDE.threadsRunning++;
  // The tables once the thread is gone (so a queue opening several partitions can start the next).
  let filled: Record<keyof IndexTables, FilledTable> | null = null;
  worker.once('message', (message: Record<keyof IndexTables, FilledTable>) => (filled = message));
  worker.on('error', () => (filled = null));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      TABLES_ASIDE.threadsRunning--;
      resolve();
    }),
  );
  const tables = exited.then((): IndexTables | null =>
    filled === null ? null : { bySeq: RowTable.of(filled.bySeq), byKey: RowTable.of(filled.byKey), byRun: RowTable.of(filled.byRun) },
  );
  return {
    tables,
    cancel: async () => {
      await worker.terminate();
      await exited;
    },
  };
}

/**
 * The thread, running this module's sibling as built: table-fill-worker.js (dist) as it is; the
 * .ts under tsx through tsx's loader, registered in the thread first (Node 20 does not run a
 * worker through the loader its parent was started with, --import tsx or not). Null when no
 * thread can be started.
 */
function startWorker(workerData: { fd: number; columns: AsideColumns }): Worker | null {
  const extension = extname(fileURLToPath(import.meta.url));
  const script = new URL(`./table-fill-worker${extension}`, import.meta.url);
  try {
    if (extension !== '.ts') return new Worker(script, { workerData });
    const tsx = import.meta.resolve('tsx/esm/api');
    const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(script.href)}); })`;
    return new Worker(boot, { eval: true, workerData });
  } catch {
    return null; // no thread to be had (the sources run by another loader than tsx, or no thread left): the index fills its own
  }
}

/** The columns the tables hash, by their snapshot names (snapshot-columns.ts: `<field>:<kind>`); null if one is missing. */
function asideColumns(columns: readonly SourcedColumn[]): AsideColumns | null {
  const named = new Map(columns.map((column) => [column.name, { position: column.position, byteLength: column.byteLength }]));
  const [seq, state, keyHash, attemptsEnd, runHash] = ['seq:f64', 'state:u8', 'keyHash:u32', 'attemptsEnd:u32', 'runHash:u32'].map((name) =>
    named.get(name),
  );
  if (seq === undefined || state === undefined || keyHash === undefined || attemptsEnd === undefined || runHash === undefined) return null;
  return { seq, state, keyHash, attemptsEnd, runHash };
}
