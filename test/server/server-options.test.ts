/** startServer's options: each bad one is InvalidArgument naming it, before anything listens. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer, type ServerOptions } from '../../src/server/start-server.ts';
import { RecordingLogger, serverOn } from './fixtures.ts';

describe('startServer: malformed options', () => {
  it('refuses each bad option, naming it and showing the value', async (t) => {
    const { local } = await serverOn(t);
    const good: ServerOptions = {
      queue: local,
      authenticator: openAuthenticator(),
      logger: new RecordingLogger(),
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: 1024,
    };
    const cases: [string, unknown, RegExp][] = [
      ['not an object', null, /^server options must be a plain object/],
      ['a Map', new Map(), /^server options must be a plain object/],
      ['an unknown option', { ...good, timeoutMs: 5 }, /^server options has an unknown option "timeoutMs"/],
      [
        'no queue',
        { ...good, queue: undefined },
        /^queue must be an object with methods submit, take, onWork, now, health, got undefined$/,
      ],
      ['a queue without methods', { ...good, queue: {} }, /^queue must be an object with methods/],
      ['no authenticator', { ...good, authenticator: undefined }, /^authenticator must be an object with methods authenticate/],
      ['a logger that is a function', { ...good, logger: () => {} }, /^logger must be an object with methods log/],
      ['a log that is no log', { ...good, log: 'file' }, /^log must be an object with methods read, endOffset, got "file"$/],
      ['an empty host', { ...good, host: '' }, /^host must be a non-empty string, got ""$/],
      ['a port too large', { ...good, port: 65_536 }, /^port must be .*got 65536$/],
      ['a port that is text', { ...good, port: '7070' }, /^port must be .*got "7070"$/],
      ['a negative port', { ...good, port: -1 }, /^port must be .*got -1$/],
      ['maxInputBytes 0', { ...good, maxInputBytes: 0 }, /^maxInputBytes must be .*got 0$/],
      ['maxInputBytes NaN', { ...good, maxInputBytes: NaN }, /^maxInputBytes must be .*got NaN$/],
      ['maxWaitMs over 60 s', { ...good, maxWaitMs: 60_001 }, /^maxWaitMs must be .*got 60001$/],
      ['tls without a key', { ...good, tls: { cert: 'PEM' } }, /^tls\.key must be PEM text .*got undefined$/],
      ['tls with an empty cert', { ...good, tls: { cert: '', key: 'PEM' } }, /^tls\.cert must be PEM text/],
      ['tls with an unknown option', { ...good, tls: { cert: 'a', key: 'b', ca: 'c' } }, /^tls has an unknown option "ca"/],
    ];
    for (const [name, options, message] of cases) {
      await assert.rejects(
        startServer(options as ServerOptions),
        (error: unknown) => {
          assert.ok(isRunlogError(error, 'InvalidArgument'), `${name}: ${String(error)}`);
          assert.match(error.message, message, name);
          return true;
        },
        name,
      );
    }
  });
});
