/** `runlog submit`: submit an entry to a running server. */
import type { Readable } from 'node:stream';
import type { SubmitRequest } from '../../queue/types.ts';
import { EXIT_OK, UsageError, type Command, type OptionValues } from '../command.ts';
import { JSON_OPTION, flag, integerOption, textOption } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { SERVER_OPTIONS, serverTargetOf, withServer } from '../server-options.ts';
import { inputOf, metadataOf, timeOption } from '../submit-input.ts';

export const submit: Command = {
  name: 'submit',
  summary: 'submit an entry to a running server; prints its ticket',
  usage: '',
  positionals: { min: 0, max: 0 },
  options: {
    tenant: { type: 'string', value: 'TENANT', help: 'the tenant (required)' },
    thread: { type: 'string', value: 'THREAD', help: 'the thread (required): entries of a thread run one at a time, in order' },
    agent: { type: 'string', value: 'AGENT', help: 'which agent runs it (required)' },
    input: { type: 'string', value: 'TEXT', help: 'the input, as UTF-8 text' },
    'input-file': { type: 'string', value: 'PATH', help: 'the input, the bytes of a file (- reads stdin)' },
    key: { type: 'string', value: 'KEY', help: 'idempotency key in the thread: the same key names the same entry' },
    strategy: {
      type: 'string',
      value: 'enqueue|reject',
      help: 'reject: refuse (ThreadBusy) if the thread has an open entry (default enqueue)',
    },
    priority: { type: 'string', value: 'N', help: 'higher runs first across threads (default 0)' },
    'not-before': { type: 'string', value: 'TIME', help: 'not before TIME: epoch ms, ISO date-time with zone, or +30s/+5m/+2h/+1d' },
    deadline: { type: 'string', value: 'TIME', help: 'start deadline (same forms): not started by then, it closes expired' },
    'max-attempts': { type: 'string', value: 'N', help: 'attempts before it is parked (default 10)' },
    metadata: { type: 'string', multiple: true, value: 'KEY=VALUE', help: 'a metadata pair' },
    ...SERVER_OPTIONS,
    ...JSON_OPTION,
  },
  details:
    'Human output: the entry id (and whether the key named an existing entry). --json: the Ticket { tenant, thread, entryId, created }.',
  async run({ values, io }) {
    const target = serverTargetOf(values, io);
    const request = await submitRequestOf(values, io.stdin);
    const ticket = await withServer(target, (queue) => queue.submit(request));
    if (flag(values, 'json')) await writeJson(io.stdout, ticket);
    else await writeLine(io.stdout, ticket.created ? ticket.entryId : `${ticket.entryId} (already submitted with this key)`);
    return EXIT_OK;
  },
};

async function submitRequestOf(values: OptionValues, stdin: Readable): Promise<SubmitRequest> {
  const request: SubmitRequest = {
    tenant: required(values, 'tenant'),
    thread: required(values, 'thread'),
    agent: required(values, 'agent'),
    input: new Uint8Array(0),
  };
  const key = textOption(values, 'key');
  if (key !== undefined) request.key = key;
  const strategy = textOption(values, 'strategy');
  if (strategy !== undefined) {
    if (strategy !== 'enqueue' && strategy !== 'reject')
      throw new UsageError(`--strategy must be enqueue or reject, got ${JSON.stringify(strategy)}`);
    request.strategy = strategy;
  }
  const priority = integerOption(values, 'priority', -(2 ** 31), 2 ** 31 - 1);
  if (priority !== undefined) request.priority = priority;
  const notBefore = timeOption(values, 'not-before', Date.now);
  if (notBefore !== undefined) request.notBefore = notBefore;
  const deadline = timeOption(values, 'deadline', Date.now);
  if (deadline !== undefined) request.deadline = deadline;
  const maxAttempts = integerOption(values, 'max-attempts', 1);
  if (maxAttempts !== undefined) request.maxAttempts = maxAttempts;
  const metadata = metadataOf(values);
  if (metadata !== undefined) request.metadata = metadata;
  request.input = await inputOf(values, stdin); // last: stdin is read only once the flags are right
  return request;
}

function required(values: OptionValues, name: string): string {
  const value = textOption(values, name);
  if (value === undefined) throw new UsageError(`submit needs --${name}`);
  return value;
}
