/**
 * The commands of the commands topic (`<events topic>.commands`): what a producer that speaks
 * Kafka and Avro writes to submit or cancel, inside its own transactions. These TypeScript
 * shapes mirror `schemas/commands/*.avsc` (namespace runlog.commands); the command codec
 * (command-codec.ts) maps between the two. As for events: bytes are `Uint8Array`, absent
 * optional values `null`. The owner of the partition answers each with a CommandAnswered event.
 */
import type { Strategy } from './types.ts';

export interface SubmitCommand {
  type: 'SubmitCommand';
  requestId: string;
  tenant: string;
  thread: string;
  agent: string;
  input: Uint8Array;
  key: string | null;
  /** Null: enqueue. */
  strategy: Strategy | null;
  /** Null: 0. */
  priority: number | null;
  notBefore: number | null;
  deadline: number | null;
  /** Null: the queue's default. */
  maxAttempts: number | null;
  metadata: Record<string, string>;
}

export interface CancelCommand {
  type: 'CancelCommand';
  requestId: string;
  tenant: string;
  thread: string;
  entryId: string;
  reason: string | null;
}

export type RunlogCommand = SubmitCommand | CancelCommand;

export type CommandType = RunlogCommand['type'];

export const COMMAND_TYPES: readonly CommandType[] = ['SubmitCommand', 'CancelCommand'];
