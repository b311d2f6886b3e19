/**
 * The commands that talk to a running server (submit, get, cancel, list): where it is and
 * who is asking. --url (or RUNLOG_URL, default http://127.0.0.1:7070) and --token (or
 * RUNLOG_TOKEN); the client (src/client connect) checks both before the command runs.
 */
import { connect } from '../client/index.ts';
import { RunlogError, isRunlogError } from '../errors.ts';
import type { RunQueueApi } from '../queue/types.ts';
import type { CliIo, OptionSpecs, OptionValues } from './command.ts';
import { integerOption, textOption } from './options.ts';

export const DEFAULT_URL = 'http://127.0.0.1:7070';

export const SERVER_OPTIONS: OptionSpecs = {
  url: { type: 'string', value: 'URL', help: `the runlog server (env RUNLOG_URL, default ${DEFAULT_URL})` },
  token: { type: 'string', value: 'TOKEN', help: 'its bearer token (env RUNLOG_TOKEN; none for a server without tokens)' },
  'retry-ms': {
    type: 'string',
    value: 'MS',
    help: 'retry what is safe to retry (server unreachable, log unavailable) for up to MS ms (default 5000; 0: never)',
  },
};

/** The server options read (and checked) before anything is asked of the server. */
export interface ServerTarget {
  url: string;
  token: string | undefined;
  retryMs: number;
}

export function serverTargetOf(values: OptionValues, io: CliIo): ServerTarget {
  const url = textOption(values, 'url') ?? nonEmpty(io.env.RUNLOG_URL) ?? DEFAULT_URL;
  const token = textOption(values, 'token') ?? nonEmpty(io.env.RUNLOG_TOKEN);
  return { url, token, retryMs: integerOption(values, 'retry-ms', 0, 600_000) ?? 5_000 };
}

/** Connects, runs `body` with the server's queue, and lets go of the connection. */
export async function withServer<T>(target: ServerTarget, body: (queue: RunQueueApi) => Promise<T>): Promise<T> {
  const queue = await connect({
    url: target.url,
    ...(target.token === undefined ? {} : { token: target.token }),
    retry: { forMs: target.retryMs },
    onWarning: () => undefined, // the work stream's troubles: these commands open none
  }).catch((error: unknown) => {
    throw isRunlogError(error, 'Unauthorized') ? refusedAccess(target) : error;
  });
  try {
    return await body(queue);
  } finally {
    await queue.stop();
  }
}

/** Unauthorized as the command line gives the token. */
function refusedAccess(target: ServerTarget): RunlogError {
  const given =
    target.token === undefined
      ? 'none was given: pass --token TOKEN or set RUNLOG_TOKEN'
      : 'the one given (--token or RUNLOG_TOKEN) was refused';
  return new RunlogError('Unauthorized', `${target.url} needs a valid token: ${given}`);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
