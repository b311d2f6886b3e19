/**
 * Opening the log for the commands that only read (history, replay, tail, export):
 * openLogReadOnly, so they create, repair, cut and lock nothing, fence no Kafka writer,
 * and read a log a live writer holds. What the log reports on open (a torn tail, left as
 * it is) goes to stderr: stdout stays the answer.
 */
import type { EventLog, LogConfig } from '../log/event-log.ts';
import { openLogReadOnly } from '../log/open-log.ts';
import type { RunlogWarning } from '../warnings.ts';
import type { CliIo } from './command.ts';

export async function openReadLog(config: LogConfig, io: CliIo, warned = new Set<string>()): Promise<EventLog> {
  return openLogReadOnly(config, ({ code, message }: RunlogWarning) => {
    const line = `runlog: warning ${code}: ${message}\n`;
    if (warned.has(line)) return; // a follower reopening the log says each thing once
    warned.add(line);
    io.stderr.write(line);
  });
}

/** Runs `body` over the log opened read-only, and closes it. */
export async function withReadLog<T>(config: LogConfig, io: CliIo, body: (log: EventLog) => Promise<T>): Promise<T> {
  const log = await openReadLog(config, io);
  try {
    return await body(log);
  } finally {
    await log.close();
  }
}
