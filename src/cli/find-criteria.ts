/** What `runlog find` looks for: its options, read into one predicate over entry summaries. */
import type { Outcome } from '../events/types.ts';
import { UsageError, type OptionSpecs, type OptionValues } from './command.ts';
import type { EntrySummary } from '../../projections/entry-summaries.ts';
import { textOption } from './options.ts';
import { metadataOf, timeOption } from './submit-input.ts';

export const FIND_OPTIONS: OptionSpecs = {
  tenant: { type: 'string', value: 'TENANT', help: "only this tenant's entries" },
  thread: { type: 'string', value: 'THREAD', help: 'only entries of this thread' },
  key: { type: 'string', value: 'KEY', help: 'only the entry submitted with this idempotency key' },
  agent: { type: 'string', value: 'AGENT', help: 'only entries for this agent' },
  holder: { type: 'string', value: 'WORKER', help: 'only entries this worker (lease holder) last held' },
  status: { type: 'string', value: 'open|closed', help: 'only open or only closed entries' },
  outcome: { type: 'string', value: 'OUTCOME', help: 'only entries closed so: succeeded, failed, cancelled, expired or threadDeleted' },
  since: { type: 'string', value: 'TIME', help: 'submitted at or after TIME: epoch ms, ISO date-time with zone, or +N(s|m|h|d)' },
  until: { type: 'string', value: 'TIME', help: 'submitted before TIME (same forms)' },
  metadata: { type: 'string', multiple: true, value: 'KEY=VALUE', help: 'only entries whose metadata has this pair' },
};

/** Every Outcome (the record's keys make the compiler check the list is whole). */
const OUTCOME_SET: Record<Outcome, true> = { succeeded: true, failed: true, cancelled: true, expired: true, threadDeleted: true };
const OUTCOMES = Object.keys(OUTCOME_SET) as Outcome[];

function OUTCOMES_TEXT(): string {
  return OUTCOMES.join(', ');
}

export type EntryPredicate = (summary: EntrySummary) => boolean;

export function findPredicate(values: OptionValues, now: () => number): EntryPredicate {
  const tests: EntryPredicate[] = [];
  for (const name of ['tenant', 'thread', 'key', 'agent', 'holder'] as const) {
    const wanted = textOption(values, name);
    if (wanted !== undefined) tests.push((s) => s[name] === wanted);
  }
  const status = textOption(values, 'status');
  if (status !== undefined && status !== 'open' && status !== 'closed')
    throw new UsageError(`--status must be open or closed, got ${JSON.stringify(status)}`);
  if (status !== undefined) tests.push((s) => s.status === status);
  const outcome = textOption(values, 'outcome');
  if (outcome !== undefined && !Object.hasOwn(OUTCOME_SET, outcome))
    throw new UsageError(`--outcome must be one of ${OUTCOMES_TEXT()}, got ${JSON.stringify(outcome)}`);
  if (outcome !== undefined) tests.push((s) => s.outcome === outcome);
  const since = timeOption(values, 'since', now);
  const until = timeOption(values, 'until', now);
  if (since !== undefined && until !== undefined && until <= since)
    throw new UsageError(`--until must be after --since, got ${values.since} .. ${values.until}`);
  if (since !== undefined) tests.push((s) => s.submittedAt >= since);
  if (until !== undefined) tests.push((s) => s.submittedAt < until);
  const metadata = Object.entries(metadataOf(values) ?? {});
  if (metadata.length > 0) tests.push((s) => metadata.every(([k, v]) => Object.hasOwn(s.metadata, k) && s.metadata[k] === v));
  return (summary) => tests.every((test) => test(summary));
}
