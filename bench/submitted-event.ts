/**
 * A Submitted event for the benches and tests that build logs or fold events by hand: where it
 * stands (tenant, thread, entry id, sequence, time) is the caller's; the work defaults to an
 * empty input for agent "build" with the queue's submission defaults, and `extra` overrides any
 * field. In bench/ (tests import from bench/, never the other way).
 */
import type { Submitted } from '../src/events/types.ts';

export type SubmittedPlace = Pick<Submitted, 'tenant' | 'thread' | 'entryId' | 'seq' | 'at'>;

export function submittedEvent(place: SubmittedPlace, extra: Partial<Submitted> = {}): Submitted {
  return {
    type: 'Submitted',
    ...place,
    agent: 'build',
    input: new Uint8Array(0),
    key: null,
    strategy: 'enqueue',
    priority: 0,
    notBefore: null,
    deadline: null,
    maxAttempts: 10,
    metadata: {},
    ...extra,
  };
}
