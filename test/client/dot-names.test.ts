/**
 * Names that are path dot segments (`.`, `..`) are names like any other over HTTP: the client
 * sends them percent-encoded (%2E), and the server routes by the path as sent, never by a URL
 * that resolved them (which would turn `/v1/tenants/../threads/./entries` into another route).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { connect } from '../../src/client/index.ts';
import { serverOn } from '../server/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';

it('a tenant named .. and a thread named . submit, read, list and cancel over HTTP', async (t) => {
  const { server } = await serverOn(t);
  const queue = await connect({ url: server.url });
  onCleanup(t, () => queue.stop());
  const ticket = await queue.submit({ tenant: '..', thread: '.', agent: 'build', input: 'dots' });
  assert.equal((await queue.entry('..', ticket.entryId)).thread, '.');
  assert.deepEqual(
    (await queue.openEntries('..', '.')).map((entry) => entry.entryId),
    [ticket.entryId],
  );
  assert.equal((await queue.cancel('..', ticket.entryId)).outcome, 'cancelled');
  assert.equal(await queue.deleteThread('..', '.'), 0);
});
