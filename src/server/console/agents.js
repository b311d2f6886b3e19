// The agents panel: each agent's backlog and its counts over the last minutes (GET /v1/agents).
import { getJson } from './api.js';
import { duration, number, row, say } from './dom.js';

export async function showAgents(tenant, minutes) {
  const body = document.querySelector('#agents tbody');
  const query = new URLSearchParams({ minutes: String(minutes), ...(tenant ? { tenant } : {}) });
  try {
    const answer = await getJson(`/v1/agents?${query}`);
    say('agents-message', answer.agents.length === 0 ? 'no agents yet' : '');
    body.replaceChildren(...answer.agents.map((agent) => agentRow(agent, answer)));
  } catch (error) {
    say('agents-message', error.message);
    body.replaceChildren();
  }
}

function agentRow(agent, { now, minutes }) {
  const otherCloses = agent.cancelled + agent.expired + agent.threadDeleted;
  const closed = agent.succeeded + agent.failed + otherCloses;
  const oldest = agent.oldestWaitingAt === null ? '' : duration(Math.max(0, now - agent.oldestWaitingAt));
  const counts = [agent.open, agent.running, agent.waiting];
  const tr = row([
    agent.agent,
    ...counts.map(number),
    oldest,
    ...[agent.submitted, agent.started, agent.retried, agent.succeeded, agent.failed, otherCloses].map(number),
    number((closed / minutes).toFixed(2)),
  ]);
  tr.dataset.agent = agent.agent;
  return tr;
}
