/**
 * The JSON-lines logger (src/server/logger.ts): one parseable line per event with time,
 * level, event and fields; the level filter; errors as code and message (stack at debug
 * only); values JSON cannot hold; a field that would overwrite time, level or event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunlogError } from '../../src/errors.ts';
import { LOG_LEVELS, openJsonLogger, type JsonLoggerOptions } from '../../src/server/logger.ts';
import type { LogLevel } from '../../src/server/types.ts';

function capture(level?: LogLevel) {
  const lines: string[] = [];
  const logger = openJsonLogger({ level, write: (line) => lines.push(line), clock: () => Date.UTC(2026, 11, 1, 5, 40) });
  return { logger, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('JSON-lines logger', () => {
  it('writes one line per event: time, level, event, then the fields', () => {
    const { logger, lines, records } = capture();
    logger.log('info', 'serve.listening', { url: 'http://127.0.0.1:7070', port: 7070 });
    logger.log('warn', 'serve.no-tokens');
    assert.deepEqual(lines, [
      '{"time":"2026-12-01T05:40:00.000Z","level":"info","event":"serve.listening","url":"http://127.0.0.1:7070","port":7070}\n',
      '{"time":"2026-12-01T05:40:00.000Z","level":"warn","event":"serve.no-tokens"}\n',
    ]);
    assert.equal(records().length, 2);
  });

  it('drops events below its level', () => {
    // [level, the levels written]
    const rows: [LogLevel | undefined, LogLevel[]][] = [
      [undefined, ['info', 'warn', 'error']],
      ['debug', ['debug', 'info', 'warn', 'error']],
      ['info', ['info', 'warn', 'error']],
      ['warn', ['warn', 'error']],
      ['error', ['error']],
    ];
    for (const [level, written] of rows) {
      const { logger, records } = capture(level);
      for (const each of LOG_LEVELS) logger.log(each, `e.${each}`);
      assert.deepEqual(
        records().map((r) => r.level),
        written,
        `level ${level}`,
      );
    }
  });

  it('refuses malformed options, naming them', () => {
    // [options, the message]
    const rows: [unknown, string][] = [
      [null, 'options must be a plain object, got null'],
      ['info', 'options must be a plain object, got "info"'],
      [new Map(), 'options must be a plain object, got Map(0) {}'],
      [{ levle: 'info' }, 'options has an unknown option "levle"; allowed: level, write, clock'],
      [{ level: 'verbose' }, 'options.level must be one of debug, info, warn, error, got "verbose"'],
      [{ level: 'INFO' }, 'options.level must be one of debug, info, warn, error, got "INFO"'],
      [{ write: 'stdout' }, 'options.write must be a function, got "stdout"'],
      [{ clock: 5 }, 'options.clock must be a function, got 5'],
    ];
    for (const [options, message] of rows) {
      assert.throws(() => openJsonLogger(options as JsonLoggerOptions), { code: 'InvalidArgument', message }, String(message));
    }
  });

  it('writes errors as name, code, message and cause, with the stack only at debug', () => {
    const cause = new Error('disk full');
    const error = new RunlogError('LogUnavailable', 'append failed', { cause });
    const system = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const { logger, records } = capture('info');
    logger.log('error', 'http.error', { error, system });
    const [info] = records();
    assert.deepEqual(info!.error, {
      name: 'RunlogError',
      code: 'LogUnavailable',
      retriable: true,
      message: 'append failed',
      cause: { name: 'Error', message: 'disk full' },
    });
    assert.deepEqual(info!.system, { name: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });

    const debug = capture('debug');
    debug.logger.log('error', 'http.error', { error });
    const written = debug.records()[0]!.error as Record<string, unknown>;
    assert.match(String(written.stack), /^RunlogError: append failed\n\s+at /);
    assert.match(String((written.cause as Record<string, unknown>).stack), /^Error: disk full\n\s+at /);
  });

  it('writes values JSON cannot hold, and never throws', () => {
    const cycle: Record<string, unknown> = { name: 'a' };
    cycle.self = cycle;
    const looped = new Error('looped');
    looped.cause = looped;
    const shared = { x: 1 };
    const { logger, records } = capture();
    logger.log('info', 'odd', { offset: 12n, input: new Uint8Array(5), cycle, looped, twice: [shared, shared] });
    const hostile = {
      toJSON() {
        throw new Error('no');
      },
    };
    logger.log('info', 'hostile', { hostile });
    const [odd, failed] = records();
    assert.equal(odd!.offset, '12');
    assert.deepEqual(odd!.input, { bytes: 5 });
    assert.deepEqual(odd!.cycle, { name: 'a', self: '[Circular]' });
    assert.deepEqual(odd!.looped, { name: 'Error', message: 'looped', cause: '[Circular]' });
    assert.deepEqual(odd!.twice, [{ x: 1 }, { x: 1 }]);
    assert.deepEqual(failed, {
      time: '2026-12-01T05:40:00.000Z',
      level: 'info',
      event: 'hostile',
      logError: 'the fields could not be written: Error: no',
    });
  });

  it('keeps time, level and event its own: such a field is written as field.<name>', () => {
    const { logger, records } = capture();
    logger.log('info', 'x', { time: 'then', level: 'loud', event: 'other', ok: true });
    assert.deepEqual(records()[0], {
      time: '2026-12-01T05:40:00.000Z',
      level: 'info',
      event: 'x',
      'field.time': 'then',
      'field.level': 'loud',
      'field.event': 'other',
      ok: true,
    });
  });
});
