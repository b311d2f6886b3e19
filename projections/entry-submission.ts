/**
 * What an entry was submitted with, as the view holds it (entry-state.ts): a closed entry
 * (closed-entry.ts) and a snapshot's entry (view-snapshot.ts) both start from these fields.
 */
import type { EntryState } from './entry-state.ts';

export type EntrySubmission = Pick<
  EntryState,
  'entryId' | 'seq' | 'agent' | 'input' | 'key' | 'priority' | 'deadline' | 'maxAttempts' | 'metadata' | 'submittedAt'
>;

export function submissionOf(entry: EntryState): EntrySubmission {
  const { entryId, seq, agent, input, key, priority, deadline, maxAttempts, metadata, submittedAt } = entry;
  return { entryId, seq, agent, input, key, priority, deadline, maxAttempts, metadata, submittedAt };
}
