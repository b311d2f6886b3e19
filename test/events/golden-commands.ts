/**
 * One fixed command of every type, the values the golden files in
 * test/fixtures/golden/commands/ hold (as golden-events.ts for events). Never change an entry
 * whose file is committed: add new ones.
 */
import type { RunlogCommand } from '../../src/events/command-types.ts';

export const GOLDEN_COMMANDS: Readonly<Record<string, RunlogCommand>> = {
  'SubmitCommand.v1.bin': {
    type: 'SubmitCommand',
    requestId: 'req-7a1/ü',
    tenant: 'acme',
    thread: 'ticket-42',
    agent: 'summarise',
    input: new TextEncoder().encode('{"doc":"ü"}'),
    key: 'req-9f2c',
    strategy: 'reject',
    priority: -3,
    notBefore: 1_767_225_660_000,
    deadline: null,
    maxAttempts: 5,
    metadata: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
  },
  'CancelCommand.v1.bin': {
    type: 'CancelCommand',
    requestId: 'req-7a2',
    tenant: 'acme',
    thread: 'ticket-42',
    entryId: '3-AAAAAAAAAAAAAAAAAAAAAA',
    reason: 'superseded',
  },
};
