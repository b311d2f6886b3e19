/**
 * Decider specifications, after emmett's DeciderSpecification: `given(events)` folds the
 * events into a fresh PartitionView (as replay does), `when(command, now)` asks decide.ts,
 * and `then` states the decision: exactly these events (deepStrictEqual), this refusal's
 * code, or no change. No log, no RunQueue.
 *
 *   given(keyCreated, submitted(1)).when({ type: 'Lease', ... }, T0).then([leased(1)]);
 */
import assert from 'node:assert/strict';
import type { ErrorCode } from '../../src/errors.ts';
import { recordKeyOf } from '../../src/events/keys.ts';
import type { AttemptStarted, RunlogEvent, Submitted } from '../../src/events/types.ts';
import type { Command, Decision } from '../../src/queue/commands.ts';
import { decide, type ClosedReader } from '../../src/queue/decide.ts';
import { closedEntryFromRecords, type Closing } from '../../projections/closed-entry.ts';
import { PartitionView } from '../../projections/partition-view.ts';

export interface Then {
  /** The decision itself, for what `then` does not state (its kind, an entry id). */
  readonly decision: Decision;
  /** The command appends exactly `events` (created, leased, expired instead, or appended), or is refused with this code. */
  then(expected: RunlogEvent[] | ErrorCode): Decision;
  /** Nothing is appended and nothing refused. */
  thenUnchanged(): void;
}

/** A fresh view of partition `partition` with `events` folded at offsets 0, 1, ... */
export function viewOf(events: readonly RunlogEvent[], partition = 0): PartitionView {
  const view = new PartitionView(partition);
  events.forEach((event, offset) => view.apply(BigInt(offset), recordKeyOf(event), event));
  return view;
}

export function given(...events: RunlogEvent[]): { view: PartitionView; when(command: Command, now: number): Then } {
  const view = viewOf(events);
  return { view, when: (command, now) => outcomeOf(decide(view, command, now, closedReader(view, events))) };
}

/** Closed entries whole, read back from `events` (at offsets 0, 1, ...) as the queue reads them from its log. */
export function closedReader(view: PartitionView, events: readonly (RunlogEvent | null)[]): ClosedReader {
  return (entryId) => {
    const ticket = view.closedTicket(entryId);
    const stored = ticket === undefined ? null : view.closed.stored(ticket);
    if (stored === null) return view.unsettledEntry(entryId);
    const { submittedOffset, attemptOffsets, closeOffset } = stored.records;
    const attempts = attemptOffsets.map((offset) => events[offset] as AttemptStarted);
    return closedEntryFromRecords(events[submittedOffset] as Submitted, attempts, events[closeOffset] as Closing, stored.deferredAttempts);
  };
}

function outcomeOf(decision: Decision): Then {
  return {
    decision,
    then(expected) {
      if (typeof expected === 'string') {
        assert.equal(decision.kind, 'refused', `expected the refusal ${expected}, got a decision to ${decision.kind}`);
        if (decision.kind === 'refused') assert.equal(decision.error.code, expected, decision.error.message);
      } else {
        assert.notEqual(decision.kind, 'refused', decision.kind === 'refused' ? `refused: ${decision.error.message}` : '');
        assert.notEqual(decision.kind, 'unchanged', 'expected events, the decision changes nothing');
        assert.notEqual(decision.kind, 'read', 'the decision asks for closed entries the reader did not give');
        if (decision.kind !== 'refused' && decision.kind !== 'read') assert.deepStrictEqual(decision.events, expected);
      }
      return decision;
    },
    thenUnchanged() {
      assert.deepStrictEqual(decision, { kind: 'unchanged', events: [] });
    },
  };
}
