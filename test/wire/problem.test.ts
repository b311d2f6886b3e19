import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_CODES, RunlogError, type ErrorCode } from '../../src/errors.ts';
import { errorBody, errorFromBody, problemHeaders, statusOf } from '../../src/wire/index.ts';

/** WIRE.md's table, written out again: the test fails if the code's table drifts from the contract. */
const CONTRACT: Record<ErrorCode, number> = {
  InvalidArgument: 400,
  Unauthorized: 401,
  Forbidden: 403,
  TicketNotFound: 404,
  TicketExpired: 410,
  ThreadBusy: 409,
  SubmissionKeyReused: 409,
  EntryClosed: 409,
  LeaseNotCurrent: 409,
  RunIdReused: 409,
  Parked: 409,
  QueueFull: 429,
  NotOwner: 421,
  Stopped: 503,
  LogUnavailable: 503,
  Locked: 503,
  Fenced: 503,
  Corrupt: 500,
  Internal: 500,
};

describe('wire: errors over HTTP', () => {
  for (const code of ERROR_CODES) {
    it(`${code} answers ${CONTRACT[code]} and comes back as the same RunlogError`, () => {
      assert.equal(statusOf(code), CONTRACT[code]);
      const error = new RunlogError(code, `refused: ${code}`);
      const body = errorBody(error);
      assert.deepEqual(body, {
        type: `urn:runlog:error:${code}`,
        title: code,
        status: CONTRACT[code],
        code,
        message: `refused: ${code}`,
        retriable: error.retriable,
      });
      const back = errorFromBody(body.status, JSON.parse(JSON.stringify(body)));
      assert.ok(back instanceof RunlogError);
      assert.deepEqual([back.code, back.message, back.retriable], [code, error.message, error.retriable]);
    });
  }

  it("carries NotOwner's owner URL both ways, and nothing of the kind for others", () => {
    const error = new RunlogError('NotOwner', 'partition 3 is served by http://n2:7070', { owner: 'http://n2:7070' });
    const body = errorBody(error);
    assert.equal(body.owner, 'http://n2:7070');
    const back = errorFromBody(421, JSON.parse(JSON.stringify(body)));
    assert.deepEqual([back.code, back.owner, back.retriable], ['NotOwner', 'http://n2:7070', true]);
    assert.equal(errorFromBody(421, errorBody(new RunlogError('NotOwner', 'rebalancing'))).owner, undefined);
    assert.equal('owner' in errorBody(new RunlogError('Stopped', 'x')), false);
  });

  it('keeps a retriable flag the error set itself', () => {
    const error = new RunlogError('Stopped', 'x', { retriable: true });
    assert.equal(errorFromBody(503, errorBody(error)).retriable, true);
  });

  it('gives the headers of the contract: www-authenticate on 401, retry-after on QueueFull and LogUnavailable', () => {
    assert.deepEqual(problemHeaders('Unauthorized'), { 'www-authenticate': 'Bearer' });
    assert.deepEqual(problemHeaders('QueueFull'), { 'retry-after': '1' });
    assert.deepEqual(problemHeaders('LogUnavailable'), { 'retry-after': '1' });
    assert.deepEqual(problemHeaders('TicketNotFound'), {});
  });

  it('turns an answer without a problem body into a RunlogError by its status, showing what came', () => {
    const cases: [number, unknown, ErrorCode][] = [
      [502, '<html>bad gateway</html>', 'LogUnavailable'],
      [401, null, 'Unauthorized'],
      [403, { error: 'no' }, 'Forbidden'],
      [404, 'not found', 'InvalidArgument'],
      [500, { code: 'Nope', message: 'x', retriable: false }, 'Internal'],
    ];
    for (const [status, body, code] of cases) {
      const error = errorFromBody(status, body);
      assert.equal(error.code, code, `${status} ${JSON.stringify(body)}`);
      assert.match(error.message, new RegExp(`HTTP ${status}`));
    }
    assert.match(errorFromBody(502, '<html>bad gateway</html>').message, /bad gateway/);
  });
});
