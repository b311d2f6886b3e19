/**
 * The event a log record holds, for readers of the log: a value that is no runlog event (a
 * damaged record, a topic of something else) is Corrupt naming where it lies, as the log's own
 * Corrupt errors do, not only what is wrong with its bytes.
 */
import { RunlogError } from '../errors.ts';
import { decodeEvent } from './codec.ts';
import type { RunlogEvent } from './types.ts';

export function eventOfRecord(value: Uint8Array, partition: number, offset: bigint): RunlogEvent {
  try {
    return decodeEvent(value);
  } catch (error) {
    if (!(error instanceof RunlogError) || error.code !== 'Corrupt') throw error;
    throw new RunlogError('Corrupt', `partition ${partition} @${offset}: ${error.message}`, { cause: error });
  }
}
