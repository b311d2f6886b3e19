// The console's page: reads the token (the URL fragment, or the form), and wires each
// panel's form to its view. Read-only: every call is a GET.
import { setToken, takeFragment, token } from './api.js';
import { watchAgents } from './agents.js';
import { toggleLive } from './live.js';
import { showThread } from './thread.js';
import { showTimeline } from './timeline.js';

const value = (id) => document.getElementById(id).value.trim();

function onSubmit(id, action) {
  document.getElementById(id).addEventListener('submit', (event) => {
    event.preventDefault();
    action();
  });
}

function showTokenState() {
  document.getElementById('token-state').textContent = token() === '' ? 'no token' : 'token set';
}

const fragment = takeFragment();
showTokenState();
onSubmit('token-form', () => {
  setToken(value('token'));
  document.getElementById('token').value = '';
  showTokenState();
  agentsAsked();
});
onSubmit('ticket-form', () => showTimeline(value('ticket-tenant'), value('ticket-id')));
onSubmit('thread-form', () => showThread(value('thread-tenant'), value('thread-name')));
const agentsAsked = () => watchAgents(value('agents-tenant'), Number(value('agents-minutes')) || 5);
onSubmit('agents-form', agentsAsked);
onSubmit('live-form', () => {
  const on = toggleLive(value('live-tenant'), value('live-thread'));
  document.getElementById('live-toggle').textContent = on ? 'Stop' : 'Start';
});

// The agents panel shows itself and keeps fresh once there is a token.
if (token() !== '') agentsAsked();
// A link may name a ticket to open: #token=...&tenant=acme&ticket=0-...
if (fragment.has('tenant') && fragment.has('ticket')) showTimeline(fragment.get('tenant'), fragment.get('ticket'));
