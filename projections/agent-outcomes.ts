/**
 * Per-agent outcomes and latencies, what an SLA needs: how entries of each agent closed, how
 * long they waited for their first attempt (submission to start) and how long attempts ran
 * (entry-runs.ts), as distributions (durations.ts).
 */
import type { Outcome } from '../src/events/types.ts';
import { defineProjection } from './projection.ts';
import { addDuration, emptyDistribution, type Distribution } from './durations.ts';
import { stepEntry, type EntryRun } from './entry-runs.ts';

export interface AgentOutcomes {
  agent: string;
  submitted: number;
  outcomes: Record<Outcome, number>;
  /** Submission to first attempt. */
  wait: Distribution;
  /** Each attempt's run. */
  run: Distribution;
}

export interface AgentOutcomesState {
  agents: Map<string, AgentOutcomes>;
  open: Map<string, EntryRun>;
}

export const agentOutcomes = defineProjection<AgentOutcomesState>({
  name: 'agent-outcomes',
  initial: () => ({ agents: new Map(), open: new Map() }),
  handles: ['Submitted', 'Leased', 'LeaseExtended', 'AttemptStarted', 'Yielded', 'Closed', 'CancelRequested', 'ThreadDeleted'],
  evolve(state, event) {
    const step = stepEntry(state.open, event);
    if (step === null) return state;
    const agent = outcomesOf(state, step.entry.agent);
    if (event.type === 'Submitted') agent.submitted++;
    if (step.waitedMs !== null) addDuration(agent.wait, step.waitedMs);
    if (step.ranMs !== null) addDuration(agent.run, step.ranMs);
    if (step.closedAs !== null) agent.outcomes[step.closedAs]++;
    return state;
  },
});

function outcomesOf(state: AgentOutcomesState, name: string): AgentOutcomes {
  let agent = state.agents.get(name);
  if (agent === undefined) {
    const outcomes = { succeeded: 0, failed: 0, cancelled: 0, expired: 0, threadDeleted: 0 };
    agent = { agent: name, submitted: 0, outcomes, wait: emptyDistribution(), run: emptyDistribution() };
    state.agents.set(name, agent);
  }
  return agent;
}

/** Every agent's outcomes and distributions, by agent name (copies). */
export function agentOutcomeRows(state: AgentOutcomesState): AgentOutcomes[] {
  return [...state.agents.values()].sort((a, b) => (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0)).map((row) => structuredClone(row));
}
