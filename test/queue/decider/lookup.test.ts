/**
 * Finding a tenant's entry (decide.ts `lookUp`, what every command naming an entry and every
 * read does first): "gone" (TicketExpired) told from "never issued" (TicketNotFound) without
 * memory per ticket, and another tenant's entry indistinguishable from a pruned one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunlogError } from '../../../src/errors.ts';
import type { RunlogEvent } from '../../../src/events/types.ts';
import { formatEntryId } from '../../../src/queue/entry-id.ts';
import { findEntry, lookUp } from '../../../src/queue/decide.ts';
import { viewOf } from '../../support/decider-spec.ts';
import { closed, idOf, keyCreated, pruned, submitted } from './events.ts';

function codeOf(events: RunlogEvent[], tenant: string, entryId: string): string {
  const found = lookUp(viewOf(events), tenant, entryId);
  return found instanceof RunlogError ? found.code : 'found';
}

describe('decider: looking up an entry', () => {
  const history = [keyCreated, submitted(1), submitted(2), closed(1), pruned([1], 2)];

  it("the tenant's entry is found", () => {
    assert.equal(codeOf(history, 'acme', idOf(2)), 'found');
    assert.equal(findEntry(viewOf(history), 'acme', idOf(2)).entryId, idOf(2));
  });

  it('a pruned entry: TicketExpired', () => {
    assert.equal(codeOf(history, 'acme', idOf(1)), 'TicketExpired');
  });

  it("another tenant's entry: TicketExpired, with the very message a pruned one gets", () => {
    const view = viewOf(history);
    const [theirs, pruned] = [lookUp(view, 'globex', idOf(2)), lookUp(view, 'globex', idOf(1))];
    assert.ok(theirs instanceof RunlogError && pruned instanceof RunlogError);
    assert.equal(theirs.code, 'TicketExpired');
    assert.equal(theirs.message.replace(idOf(2), 'ID'), pruned.message.replace(idOf(1), 'ID'));
  });

  it('an id above the issued sequence, a forged token, or another partition: TicketNotFound', () => {
    assert.equal(codeOf(history, 'acme', idOf(3)), 'TicketNotFound');
    assert.equal(codeOf(history, 'acme', formatEntryId(0, 2, new Uint8Array(16).fill(8))), 'TicketNotFound');
    assert.equal(codeOf(history, 'acme', formatEntryId(1, 2, keyCreated.secret)), 'TicketNotFound');
    assert.equal(codeOf(history, 'acme', 'no id at all'), 'TicketNotFound');
  });

  it('a plain (legacy) id reads as issued up to the legacy watermark of the ticket key, and never above it', () => {
    const legacy = [{ ...submitted(1), entryId: '0-1' }, { ...keyCreated, legacyThrough: 1 }, submitted(2)];
    assert.equal(codeOf(legacy, 'acme', '0-1'), 'found');
    assert.equal(codeOf([...legacy, closed(1, { entryId: '0-1' }), pruned([], 2)], 'acme', '0-2'), 'TicketNotFound');
    assert.equal(
      codeOf([...legacy, closed(1, { entryId: '0-1' }), { ...pruned([], 2), entryIds: ['0-1'] }], 'acme', '0-1'),
      'TicketExpired',
    );
  });

  it('findEntry throws the refusal (reads answer it as an error)', () => {
    assert.throws(() => findEntry(viewOf(history), 'acme', idOf(1)), { code: 'TicketExpired' });
  });
});
