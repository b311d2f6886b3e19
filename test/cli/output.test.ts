/**
 * The command line's writes to a stream whose buffer fills (an export to a slow pipe): each
 * waits for the stream to drain, and leaves no listener behind once it has.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Writable } from 'node:stream';
import { writeLine } from '../../src/cli/output.ts';

/** A stream of a 16-byte buffer that takes each chunk a turn later: every write of a line fills it. */
function slowStream(): Writable & { written: string[] } {
  const written: string[] = [];
  const stream = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      setImmediate(done);
    },
  });
  return Object.assign(stream, { written });
}

const LISTENED = ['drain', 'close', 'error'] as const;

it('writes that wait for a full buffer to drain leave no listener behind', async () => {
  const stream = slowStream();
  const before = LISTENED.map((event) => stream.listenerCount(event));
  for (let i = 0; i < 2000; i++) await writeLine(stream, `line ${i} ${'x'.repeat(40)}`);
  assert.deepEqual(
    LISTENED.map((event) => stream.listenerCount(event)),
    before,
  );
  stream.end();
  await new Promise((resolve) => stream.once('finish', resolve));
  assert.equal(stream.written.length, 2000);
  assert.equal(stream.written[1999], `line 1999 ${'x'.repeat(40)}\n`);
});

it('a write waiting on a full buffer ends when the stream closes, and fails when it errors', async () => {
  const closing = slowStream();
  const waiting = writeLine(closing, 'x'.repeat(100));
  closing.destroy();
  await waiting;
  assert.deepEqual(
    LISTENED.map((event) => closing.listenerCount(event)),
    [0, 0, 0],
  );

  const failing = slowStream();
  failing.on('error', () => {}); // the caller's own listener: the write's goes
  const failed = writeLine(failing, 'x'.repeat(100));
  failing.destroy(new Error('disk gone'));
  await assert.rejects(failed, /disk gone/);
  assert.equal(failing.listenerCount('error'), 1);
});
