/** A real log wrapped so that a test can make its appends or reads fail (faults by wrapping, never a fake). */
import { RunlogError } from '../../src/errors.ts';
import type { AppendRecord, EventLog, LogRecord } from '../../src/log/event-log.ts';
import { wrapLog } from '../support/wrap-log.ts';

export class FaultyLog {
  /** The next append fails: true for any partition, a number for that partition only. */
  failNextAppend: boolean | number = false;
  /** Reads fail while set. */
  unreadable = false;
  /** How many reads were started (a rebuild replays with one). */
  reads = 0;

  constructor(readonly log: EventLog) {}

  wrap(): EventLog {
    const log = this.log;
    return wrapLog(log, {
      append: async (partition: number, records: readonly AppendRecord[]) => {
        if (this.failNextAppend === true || this.failNextAppend === partition) {
          this.failNextAppend = false;
          throw new RunlogError('LogUnavailable', `injected append failure on partition ${partition}`);
        }
        return log.append(partition, records);
      },
      read: (partition: number, from: bigint, options?: Parameters<EventLog['read']>[2]) => {
        this.reads++;
        if (this.unreadable) return failing(new RunlogError('LogUnavailable', 'injected read failure: the log cannot be read'));
        return log.read(partition, from, options);
      },
    });
  }
}

async function* failing(error: Error): AsyncGenerator<LogRecord> {
  throw error;
}
