/**
 * A progress bar with an ETA on stderr, only when stderr is a terminal (`runlog export`):
 * redrawn in place (carriage return) at most every REDRAW_MS, finished with a newline.
 * Anywhere else (a pipe, a file, a test's stream) it writes nothing: quiet by default.
 * The ETA is the rate so far applied to what is left (elapsed / done * left).
 */
import type { Writable } from 'node:stream';
import { formatDuration } from './durations.ts';

const REDRAW_MS = 100;
const WIDTH = 30;

export interface Progress {
  /** `n` more of the total are done. */
  advance(n?: number): void;
  /** Draws the last state (100% once everything was done) and ends the line. */
  finish(): void;
}

const QUIET: Progress = { advance() {}, finish() {} };

export function isTerminal(stream: Writable): boolean {
  return (stream as Writable & { isTTY?: boolean }).isTTY === true;
}

/** A bar counting to `total` `unit`s on `stream` if it is a terminal, else nothing. `now`: a monotonic clock in ms. */
export function progressBar(stream: Writable, total: number, unit: string, now: () => number = () => performance.now()): Progress {
  if (!isTerminal(stream)) return QUIET;
  const started = now();
  let done = 0;
  let drawnAt = -Infinity;
  const draw = (final: boolean): void => {
    const at = now();
    if (!final && at - drawnAt < REDRAW_MS) return;
    drawnAt = at;
    stream.write(`\r${barLine(final ? Math.max(done, total) : done, total, unit, at - started)}${final ? '\n' : ''}`);
  };
  return {
    advance(n = 1) {
      done += n;
      draw(false);
    },
    finish() {
      draw(true);
    },
  };
}

/** `[#########.....]  45%  1234/2700 records  ETA 1.234 s` (elapsed instead of the ETA once done). */
export function barLine(done: number, total: number, unit: string, elapsedMs: number): string {
  const share = total <= 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(share * WIDTH);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}]`;
  const percent = `${Math.floor(share * 100)}%`.padStart(4);
  const left = total - done;
  const eta =
    left <= 0
      ? `done in ${formatDuration(Math.round(elapsedMs))}`
      : done === 0
        ? 'ETA --'
        : `ETA ${formatDuration(Math.round((elapsedMs / done) * left))}`;
  return `${bar} ${percent}  ${done}/${total} ${unit}  ${eta}`;
}
