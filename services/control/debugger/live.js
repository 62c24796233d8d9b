// The live feed: GET /v1/sources/{id}/live read as Server-Sent Events, the calls listed newest
// first by receivedAt, the filter, Pause/Resume and Clear, arrow-key moves between calls.
import { openCall } from './detail.js';
import { formatTime, span } from './dom.js';
import { SseParser, insertByReceivedAt, matchesFilter, userLabel } from './feed.js';
import { el, signOut, state, stopStream } from './page.js';

/** Calls kept on the page (and held while paused); older ones fall off. */
const MAX_CALLS = 500;
const RECONNECT_MS = 2000;

export function setStatus(kind, text) {
  el.status.dataset.state = kind;
  el.status.textContent = text;
}

/** Reads GET /v1/sources/{id}/live with fetch (the token in a header), reconnecting on loss. */
export function connect(sourceId) {
  stopStream();
  const controller = new AbortController();
  state.stream = controller;
  setStatus('connecting', 'Connecting…');
  void (async () => {
    let message = 'The live stream ended; reconnecting…';
    try {
      const res = await fetch(`/v1/sources/${encodeURIComponent(sourceId)}/live`, { headers: { authorization: `Bearer ${state.token}`, accept: 'text/event-stream' }, cache: 'no-store', signal: controller.signal });
      if (res.status === 401) { signOut('Your session ended: the admin token was refused. Sign in again.'); return; }
      if (!res.ok || !res.body) {
        const text = await res.text();
        let detail = text;
        try { detail = JSON.parse(text).message ?? text; } catch { /* plain text */ }
        message = `The live stream is unavailable (${detail || `HTTP ${res.status}`}); retrying…`;
      } else {
        const parser = new SseParser((event) => onStreamEvent(event));
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.push(value);
        }
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      message = `Connection lost (${err.message}); reconnecting…`;
    }
    if (controller.signal.aborted) return;
    if (el.status.dataset.state !== 'ended') setStatus('reconnecting', message);
    state.reconnectTimer = setTimeout(() => { if (state.stream === controller) connect(sourceId); }, RECONNECT_MS);
  })();
}

function onStreamEvent({ event, data }) {
  const payload = JSON.parse(data);
  if (event === 'ready') setStatus(state.paused ? 'paused' : 'live', state.paused ? pausedText() : 'Live: calls appear as they arrive.');
  else if (event === 'call') addCall(payload);
  else if (event === 'dropped') setStatus('live', `Live. ${payload.count} call(s) were skipped because they arrived faster than this page could read them.`);
  else if (event === 'end') setStatus('ended', payload.reason === 'shutdown' ? 'The server is restarting; reconnecting…' : 'The live stream stopped on the server; reconnecting…');
}

function currentFilter() {
  return { type: el.filterType.value, name: el.filterName.value, user: el.filterUser.value };
}

function addCall(call) {
  const entry = { ...call, seq: ++state.seq };
  if (state.paused) {
    insertByReceivedAt(state.held, entry, MAX_CALLS);
    setStatus('paused', pausedText());
    return;
  }
  const { index, removed } = insertByReceivedAt(state.calls, entry, MAX_CALLS);
  for (const old of removed) el.feed.querySelector(`[data-seq="${old.seq}"]`)?.remove();
  const filter = currentFilter();
  // A late arrival goes in its place by receivedAt: before the row of the next older call shown.
  if (index >= 0 && matchesFilter(entry, filter)) el.feed.insertBefore(callRow(entry), nextShownRow(index, filter));
  updateFeedMeta();
}

/** The row of the first call older than state.calls[index] that the filter shows; null: none (the row goes last). */
function nextShownRow(index, filter) {
  for (let i = index + 1; i < state.calls.length; i++) {
    const call = state.calls[i];
    if (matchesFilter(call, filter)) return el.feed.querySelector(`[data-seq="${call.seq}"]`);
  }
  return null;
}

function pausedText() {
  return `Paused. ${state.held.length} new call(s) waiting; Resume shows them.`;
}

function callRow(call) {
  const li = document.createElement('li');
  li.dataset.seq = String(call.seq);
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'call';
  button.dataset.messageId = call.messageId;
  if (state.selected?.messageId === call.messageId) button.setAttribute('aria-current', 'true');
  const time = span('time', formatTime(call.receivedAt));
  const type = span(`type type-${call.type}`, call.type);
  const name = span('name', call.name ?? '');
  const user = span('user', userLabel(call));
  button.append(time, type, name, user);
  button.addEventListener('click', () => openCall(call));
  li.append(button);
  return li;
}

function renderFeed() {
  const filter = currentFilter();
  el.feed.replaceChildren(...state.calls.filter((c) => matchesFilter(c, filter)).map(callRow));
  updateFeedMeta();
}

function updateFeedMeta() {
  const shown = el.feed.children.length;
  el.feedCount.textContent = state.calls.length === 0 ? '' : shown === state.calls.length ? `(${shown})` : `(${shown} of ${state.calls.length} match the filter)`;
  el.feedEmpty.hidden = state.calls.length > 0;
}

export function clearFeed() {
  state.calls = [];
  state.held = [];
  el.feed.replaceChildren();
  updateFeedMeta();
}

for (const input of [el.filterType, el.filterName, el.filterUser]) input.addEventListener('input', renderFeed);

el.pause.addEventListener('click', () => {
  state.paused = !state.paused;
  el.pause.textContent = state.paused ? 'Resume' : 'Pause';
  el.pause.setAttribute('aria-pressed', String(state.paused));
  if (state.paused) {
    setStatus('paused', pausedText());
  } else {
    for (const call of state.held) insertByReceivedAt(state.calls, call, MAX_CALLS);
    state.held = [];
    renderFeed();
    setStatus('live', 'Live: calls appear as they arrive.');
  }
});

el.clear.addEventListener('click', () => clearFeed());

// Arrow keys move between the calls of the feed (each is a button, so Tab reaches them too).
el.feed.addEventListener('keydown', (e) => {
  if (!(e.target instanceof HTMLButtonElement)) return;
  const li = e.target.closest('li');
  let next = null;
  if (e.key === 'ArrowDown') next = li?.nextElementSibling;
  else if (e.key === 'ArrowUp') next = li?.previousElementSibling;
  else if (e.key === 'Home') next = el.feed.firstElementChild;
  else if (e.key === 'End') next = el.feed.lastElementChild;
  else return;
  e.preventDefault();
  next?.querySelector('button')?.focus();
});
