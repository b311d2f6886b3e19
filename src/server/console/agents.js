// The agents panel: each agent's backlog and its counts over the last minutes (GET /v1/agents).
// It refreshes on its own every REFRESH_MS while the tab is visible (one request at a time:
// the next is planned when the last answered), and at once when its form is submitted.
import { getJson } from './api.js';
import { duration, number, row, say, time } from './dom.js';

const REFRESH_MS = 3000;
let settings = null;
let timer = null;

/** Shows the agents of `tenant` (all when empty) over the last `minutes`, and keeps them fresh. */
export async function watchAgents(tenant, minutes) {
  settings = { tenant, minutes };
  clearTimeout(timer);
  await refresh();
}

async function refresh() {
  const asked = settings;
  if (document.visibilityState !== 'hidden') await showAgents(asked);
  if (asked === settings) timer = setTimeout(refresh, REFRESH_MS); // a newer watchAgents planned its own
}

/** Shows what `asked` asks for, unless newer settings were asked for while it was on its way (their answer is shown instead). */
async function showAgents(asked) {
  const { tenant, minutes } = asked;
  const table = document.querySelector('#agents');
  const body = table.querySelector('tbody');
  const query = new URLSearchParams({ minutes: String(minutes), ...(tenant ? { tenant } : {}) });
  try {
    const answer = await getJson(`/v1/agents?${query}`);
    if (asked !== settings) return; // a refresh of the old settings answered after the new ones were asked for
    say('agents-message', answer.agents.length === 0 ? 'no agents yet' : '');
    body.replaceChildren(...answer.agents.map((agent) => agentRow(agent, answer)));
    table.dataset.minutes = String(answer.minutes);
    say('agents-updated', `as of ${time(answer.now)} UTC · refreshes every ${REFRESH_MS / 1000} s`);
  } catch (error) {
    if (asked !== settings) return;
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
