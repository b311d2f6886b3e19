/**
 * `runlog serve [flags]`: the queue as a service until SIGTERM or SIGINT.
 *
 * Exit codes: 0 after a graceful shutdown; 1 when the serve is refused (the log is Locked by
 * another process, Fenced, unavailable; the port is taken) or a second signal forces the exit
 * during shutdown; 2 for a usage error (an unknown flag, a bad value in flags, environment or
 * config file). A refusal to start is one line on stderr; what happens while serving is
 * logged as JSON lines on stdout (src/server/logger.ts).
 *
 * Signals are heard from the start: one that arrives while the log is still being opened
 * and replayed lets the open finish, then shuts down at once.
 */
import { parseArgs } from 'node:util';
import { isRunlogError } from '../errors.ts';
import {
  DEFAULT_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SESSION_TIMEOUT_MS,
  DEFAULT_TOPIC,
  loadServeConfig,
  SERVE_FLAGS,
} from '../server/config.ts';
import { openJsonLogger } from '../server/logger.ts';
import { serve } from '../server/serve.ts';
import type { Logger } from '../server/types.ts';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type CliIo, type RawCommand } from './command.ts';
import { write } from './output.ts';

export const SERVE_USAGE = `usage: runlog serve [flags]

Serves the run queue over HTTP until SIGTERM or SIGINT. Flags, then environment variables,
then the config file, then the defaults:

  --config FILE            RUNLOG_CONFIG            a JSON file of the settings below (keys as named in brackets)
  --port N                 RUNLOG_PORT              [port] default ${DEFAULT_PORT}; 0: a free port (logged)
  --host HOST              RUNLOG_HOST              [host] default ${DEFAULT_HOST} (loopback only without tokens)
  --dir DIR                RUNLOG_DIR               [dir] the embedded file log, default ${DEFAULT_DIR}
  --brokers H:P,...        RUNLOG_KAFKA_BROKERS     [brokers] Kafka instead of the file log
  --topic NAME             RUNLOG_TOPIC             [topic] default ${DEFAULT_TOPIC}
  --client-id NAME         RUNLOG_KAFKA_CLIENT_ID   [clientId]
  --partitions N           RUNLOG_PARTITIONS        [partitions] of a log this creates
  --max-input-bytes N      RUNLOG_MAX_INPUT_BYTES   [maxInputBytes]
  --ticket-lifetime D      RUNLOG_TICKET_LIFETIME   [ticketLifetime] prune closed entries after D (ms, or 30s, 12h, 7d)
  --tokens FILE            RUNLOG_TOKENS_FILE       [tokensFile] bearer tokens (RUNLOG_TOKENS or [tokens]: the same JSON inline)
  --tls-cert FILE          RUNLOG_TLS_CERT          [tlsCert] PEM certificate: serve HTTPS
  --tls-key FILE           RUNLOG_TLS_KEY           [tlsKey] its PEM key
  --log-level LEVEL        RUNLOG_LOG_LEVEL         [logLevel] debug, info (default), warn, error
  --group NAME             RUNLOG_GROUP             [group] be a node of a cluster on Kafka: this consumer group shares the partitions
  --advertise-url URL      RUNLOG_ADVERTISE_URL     [advertiseUrl] where others reach this node, default http(s)://<host>:<bound port>
  --session-timeout D      RUNLOG_SESSION_TIMEOUT   [sessionTimeout] a silent node's partitions move after D, default ${DEFAULT_SESSION_TIMEOUT_MS / 1000}s

Exit codes: 0 stopped by a signal, 1 refused (log locked, port taken, forced stop), 2 usage.`;

/** `runlog serve`, in the command table (it parses its own flags: they live with the server's configuration). */
export const serveCommand: RawCommand = {
  name: 'serve',
  summary: 'serve the queue over HTTP until SIGTERM or SIGINT (runlog serve --help for its flags)',
  raw: runServe,
};

/** Runs `runlog serve` with `argv` (the arguments after `serve`); resolves the exit code once it has stopped. */
export async function runServe(argv: readonly string[], io: CliIo): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: flagOptions(), strict: true, allowPositionals: false }));
  } catch (error) {
    await write(io.stderr, `runlog serve: ${error instanceof Error ? error.message : String(error)} (runlog serve --help)\n`);
    return EXIT_USAGE;
  }
  if (values.help === true) {
    await write(io.stdout, `${SERVE_USAGE}\n`);
    return EXIT_OK;
  }
  const signals = new ShutdownSignals();
  try {
    const config = await loadServeConfig(values as Record<string, string | undefined>, io.env);
    const logger = openJsonLogger({ level: config.logLevel, write: (line) => void io.stdout.write(line) });
    signals.logTo(logger);
    const serving = await serve(config, logger).catch((error: unknown) => {
      throw new StartFailed(error);
    });
    const signal = await signals.first;
    logger.log('info', 'serve.stopping', { signal });
    await serving.stop();
    return EXIT_OK;
  } catch (error) {
    const cause = error instanceof StartFailed ? error.cause : error;
    await write(io.stderr, `runlog serve: ${isRunlogError(cause) ? `${cause.code}: ${cause.message}` : String(cause)}\n`);
    return isRunlogError(cause, 'InvalidArgument') ? EXIT_USAGE : EXIT_REFUSED;
  } finally {
    signals.remove();
  }
}

function flagOptions() {
  const options: Record<string, { type: 'string' } | { type: 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const flag of SERVE_FLAGS) options[flag] = { type: 'string' };
  return options;
}

class StartFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('serve failed to start');
  }
}

/**
 * SIGTERM and SIGINT: the first starts the graceful shutdown (`first` resolves with its
 * name); a second one while shutting down forces the exit, code 1.
 */
class ShutdownSignals {
  readonly first: Promise<string>;
  #heard: string | undefined;
  #logger: Logger | undefined;
  #resolve!: (signal: string) => void;
  readonly #listener = (signal: NodeJS.Signals) => this.#hear(signal);

  constructor() {
    this.first = new Promise((resolve) => (this.#resolve = resolve));
    process.on('SIGTERM', this.#listener);
    process.on('SIGINT', this.#listener);
  }

  logTo(logger: Logger): void {
    this.#logger = logger;
  }

  remove(): void {
    process.off('SIGTERM', this.#listener);
    process.off('SIGINT', this.#listener);
  }

  #hear(signal: string): void {
    if (this.#heard === undefined) {
      this.#heard = signal;
      this.#resolve(signal);
      return;
    }
    this.#logger?.log('error', 'serve.forced', { signal, message: `${signal} during shutdown (after ${this.#heard}): exiting at once` });
    process.exit(1);
  }
}
