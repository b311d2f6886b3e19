/**
 * A command of the commands topic (src/events/command-types.ts) as the decider's Answer
 * command (commands.ts): its fields checked exactly as the API checks a submit or cancel,
 * and its partition checked, or refused (InvalidArgument) with why. A record that does not
 * decode at all is refused the same way, under the ids peekCommandIds could still read.
 */
import { RunlogError, invalidArgument } from '../errors.ts';
import { decodeCommand, peekCommandIds, type CommandIds } from '../events/command-codec.ts';
import type { RunlogCommand, SubmitCommand } from '../events/command-types.ts';
import type { AnsweredCommand } from '../events/types.ts';
import { partitionOf } from '../log/partitioner.ts';
import {
  MAX_NAME_LENGTH,
  describe,
  isPlainObject,
  isUint8Array,
  optionalText,
  requireInteger,
  requireName,
  requireObject,
} from '../validation/index.ts';
import { checkConsumed } from '../log/log-arguments.ts';
import type { ConsumedOffset } from '../log/event-log.ts';
import { COMMAND_TYPES, type CommandType } from '../events/command-types.ts';
import type { CommandOf, Request, SubmissionFields } from './commands.ts';
import { submissionFields } from './requests.ts';
import type { SubmitRequest } from './types.ts';

/** What the shell needs to make a request of a command: where it was read, the queue's limits. */
export interface RequestContext {
  partition: number;
  partitions: number;
  maxInputBytes: number;
  /** Store-clock time of a caller's wall-clock time (notBefore, deadline). */
  fromWall(at: number | null): number | null;
  /** Completes a submission into the decider's Submit command (capacity, open counts, ticket secret). */
  submitCommand(fields: SubmissionFields): CommandOf<'Submit'>;
}

export type AnswerRequest = Omit<CommandOf<'Answer'>, 'type'>;

/** answerCommand's options: a plain object of `consumed` (checkConsumed) and `generation` (a non-negative integer). */
export function answerOptions(options: unknown): { consumed?: ConsumedOffset; generation?: number } {
  const body = requireObject('answerCommand options', options, ['consumed', 'generation']);
  const checked: { consumed?: ConsumedOffset; generation?: number } = {};
  if (body.consumed !== undefined) checked.consumed = checkConsumed(body.consumed);
  if (body.generation !== undefined) checked.generation = requireInteger('generation', body.generation, 0);
  return checked;
}

/**
 * What answerCommand answers: a record's value (Uint8Array, or null for a tombstone) or a
 * command object of a known type. Anything else is the caller's mistake, not a command to
 * refuse: InvalidArgument, thrown, nothing written. (A command object whose fields are bad is
 * a command, refused by its answer.)
 */
export function requireCommand(value: unknown): void {
  if (value === null || isUint8Array(value)) return;
  if (isPlainObject(value) && COMMAND_TYPES.includes((value as { type?: unknown }).type as CommandType)) return;
  throw invalidArgument(
    `a command must be a record's bytes (Uint8Array), null, or a SubmitCommand or CancelCommand object, got ${describe(value)}`,
  );
}

/** A command the shell cannot answer (the caller skips it, warning): why. */
export interface Unanswerable {
  unreadable: string;
}

/** A record's value as an Answer; `unreadable` (why) when not even its ids can be read, or it cannot be answered under them (the caller skips it, warning). */
export function requestOfRecord(value: Uint8Array | null, context: RequestContext): AnswerRequest | Unanswerable {
  if (value === null) return { unreadable: 'a tombstone (null value) is no command' };
  let command: RunlogCommand;
  try {
    command = decodeCommand(value);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const ids = peekCommandIds(value);
    if (ids === null) return { unreadable: `the record does not decode and names no request id: ${why}` };
    const unusable = unanswerable(ids.requestId, ids.tenant);
    if (unusable !== null) return unusable;
    const refusal = invalidArgument(`the command record does not decode: ${why}`);
    const { requestId, tenant } = ids;
    const thread = answerThread(ids.thread);
    return { requestId, tenant, thread, request: { kind: 'invalid', command: answeredCommandOf(ids), error: refusal } };
  }
  return requestOf(command, context);
}

export function requestOf(command: RunlogCommand, context: RequestContext): AnswerRequest | Unanswerable {
  const unusable = unanswerable(command.requestId, command.tenant);
  if (unusable !== null) return unusable;
  const { requestId, tenant } = command;
  const thread = answerThread(command.thread);
  const answered: AnsweredCommand = command.type === 'SubmitCommand' ? 'submit' : 'cancel';
  try {
    requireName('thread', command.thread);
    const home = partitionOf(tenant, thread, context.partitions);
    if (home !== context.partition) {
      throw invalidArgument(
        `the command for thread ${JSON.stringify(thread)} of tenant ${JSON.stringify(tenant)} came on commands partition ${context.partition}, but the thread's partition is ${home}: its record key must be tenant + U+0000 + thread (UTF-8), partitioned as Kafka's default partitioner does`,
      );
    }
    return { requestId, tenant, thread, request: checked(command, context) };
  } catch (error) {
    if (!(error instanceof RunlogError)) throw error;
    return { requestId, tenant, thread, request: { kind: 'invalid', command: answered, error } };
  }
}

function checked(command: RunlogCommand, context: RequestContext): Request {
  if (command.type === 'CancelCommand') {
    const { tenant, entryId } = command;
    if (typeof entryId !== 'string') throw invalidArgument('entryId must be a string');
    return { kind: 'cancel', command: { type: 'Cancel', tenant, entryId, reason: optionalText('reason', command.reason, 64 * 1024) } };
  }
  const fields = submissionFields(submitRequestOf(command), context.maxInputBytes);
  fields.notBefore = context.fromWall(fields.notBefore);
  fields.deadline = context.fromWall(fields.deadline);
  return { kind: 'submit', command: context.submitCommand(fields) };
}

/** The command's submission as the API's submit request: a null optional asks for its default. */
function submitRequestOf(command: SubmitCommand): SubmitRequest {
  const { tenant, thread, agent, input, metadata } = command;
  const request: SubmitRequest = { tenant, thread, agent, input, metadata };
  if (command.key !== null) request.key = command.key;
  if (command.strategy !== null) request.strategy = command.strategy;
  if (command.priority !== null) request.priority = command.priority;
  if (command.notBefore !== null) request.notBefore = command.notBefore;
  if (command.deadline !== null) request.deadline = command.deadline;
  if (command.maxAttempts !== null) request.maxAttempts = command.maxAttempts;
  return request;
}

/**
 * Why a command cannot be answered, or null. Its answer is keyed by its tenant and request id
 * (r/<tenant>/<requestId>) and carries both, so each must be a name (at most 1,024 characters):
 * a refusal answered under a request id of 700,000 characters was a record past the log's limit,
 * which the append refused, and the commands of its partition behind it were read again and
 * again, never answered (the Kafka tester, 4 of 4). No caller can wait for an answer under such
 * ids: the command is skipped (RUNLOG_COMMAND), as a record naming no request id is.
 */
function unanswerable(requestId: unknown, tenant: unknown): Unanswerable | null {
  try {
    requireName('requestId', requestId);
    requireName('tenant', tenant);
    return null;
  } catch (error) {
    if (!(error instanceof RunlogError)) throw error;
    return { unreadable: `it cannot be answered under its ids: ${error.message}` };
  }
}

/** The thread an answer names: the command's, or empty when it is no name (the refusal says why; the answer stays within a record). */
function answerThread(thread: unknown): string {
  return typeof thread === 'string' && thread.length <= MAX_NAME_LENGTH ? thread : '';
}

function answeredCommandOf(ids: CommandIds): AnsweredCommand {
  return ids.type === 'CancelCommand' ? 'cancel' : 'submit';
}
