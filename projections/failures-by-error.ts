/**
 * Failures grouped by error: every failed attempt (a retry's error, or the error an entry
 * closed `failed` with) counted under its signature, the error's first line with runs of
 * digits written `#` ("Error: timeout after 30000 ms" and "... 15000 ms" are one group),
 * at most 200 characters. Each group keeps its latest error whole as a sample.
 */
import type { RunlogEvent } from '../src/events/types.ts';
import { defineProjection } from './projection.ts';
import { stepEntry, type EntryRun } from './entry-runs.ts';

export interface FailureGroup {
  signature: string;
  /** The latest error of the group, as recorded. */
  sample: string;
  /** Failed attempts: retried, or the last of an entry closed failed. */
  attempts: number;
  /** Entries closed failed with it. */
  entries: number;
  /** Failed attempts by agent. */
  agents: Map<string, number>;
  firstAt: number;
  lastAt: number;
  lastEntryId: string;
}

export interface FailuresState {
  groups: Map<string, FailureGroup>;
  open: Map<string, EntryRun>;
}

const SIGNATURE_LENGTH = 200;

export function errorSignature(error: string): string {
  const line = error.split('\n', 1)[0]!.trim().replace(/\d+/g, '#');
  return line.length > SIGNATURE_LENGTH ? line.slice(0, SIGNATURE_LENGTH) : line;
}

export const failuresByError = defineProjection<FailuresState>({
  name: 'failures-by-error',
  initial: () => ({ groups: new Map(), open: new Map() }),
  handles: ['Submitted', 'Leased', 'LeaseExtended', 'AttemptStarted', 'Yielded', 'Closed', 'CancelRequested', 'ThreadDeleted'],
  evolve(state, event) {
    const step = stepEntry(state.open, event);
    const error = failureOf(event);
    if (step === null || error === null) return state;
    const group = groupOf(state, error, event);
    group.attempts++;
    if (event.type === 'Closed') group.entries++;
    group.agents.set(step.entry.agent, (group.agents.get(step.entry.agent) ?? 0) + 1);
    group.sample = error;
    group.lastAt = event.at;
    group.lastEntryId = event.entryId!;
    return state;
  },
});

/** The error of a failed attempt this event records, or null. */
function failureOf(event: RunlogEvent): string | null {
  if (event.type === 'Yielded' && event.kind === 'retry') return event.error ?? '(no error recorded)';
  if (event.type === 'Closed' && event.outcome === 'failed') return event.error ?? '(no error recorded)';
  return null;
}

function groupOf(state: FailuresState, error: string, event: RunlogEvent): FailureGroup {
  const signature = errorSignature(error);
  let group = state.groups.get(signature);
  if (group === undefined) {
    group = { signature, sample: error, attempts: 0, entries: 0, agents: new Map(), firstAt: event.at, lastAt: event.at, lastEntryId: '' };
    state.groups.set(signature, group);
  }
  return group;
}

/** The groups, most failed attempts first (then by signature), with `agents` as a plain record. */
export function failureGroups(state: FailuresState): (Omit<FailureGroup, 'agents'> & { agents: Record<string, number> })[] {
  return [...state.groups.values()]
    .sort((a, b) => b.attempts - a.attempts || (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0))
    .map((group) => ({ ...group, agents: Object.fromEntries([...group.agents].sort(([a], [b]) => (a < b ? -1 : 1))) }));
}
