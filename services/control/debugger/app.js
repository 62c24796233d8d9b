// The debugger page: sign in with the admin token, pick a source, watch its calls arrive live,
// open one to see its JSON and its deliveries, replay dead letters. Plain DOM, no framework, no
// build step; every value from the server is written with textContent, never as HTML.
import { SseParser, hasAttemptSince, insertByReceivedAt, matchesFilter, traceIsFinal, userLabel } from './feed.js';

/** Calls kept on the page (and held while paused); older ones fall off. */
const MAX_CALLS = 500;
const TOKEN_KEY = 'switchyard.adminToken';
const SOURCE_KEY = 'switchyard.debugger.source';
const RECONNECT_MS = 2000;
const TRACE_REFRESH_MS = 1500;
const USAGE_REFRESH_MS = 5000;
/** Auto-refresh of an unfinished trace stops after this long (the Refresh button still works). */
const TRACE_REFRESH_FOR_MS = 10 * 60_000;

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const el = {
  login: $('login'), loginForm: /** @type {HTMLFormElement} */ ($('login-form')), token: /** @type {HTMLInputElement} */ ($('token')), loginError: $('login-error'),
  app: $('app'), logout: $('logout'),
  source: /** @type {HTMLSelectElement} */ ($('source')), filterType: /** @type {HTMLSelectElement} */ ($('filter-type')),
  filterName: /** @type {HTMLInputElement} */ ($('filter-name')), filterUser: /** @type {HTMLInputElement} */ ($('filter-user')),
  pause: $('pause'), clear: $('clear'), status: $('status'), usage: $('usage'),
  feed: $('feed'), feedEmpty: $('feed-empty'), feedCount: $('feed-count'),
  detailTitle: $('detail-title'), detailEmpty: $('detail-empty'), detailBody: $('detail-body'), detailSummary: $('detail-summary'),
  trace: $('trace'), traceStatus: $('trace-status'), traceRefresh: $('trace-refresh'), json: $('json'),
  deadLetterDestination: /** @type {HTMLSelectElement} */ ($('dead-letter-destination')), deadLettersRefresh: $('dead-letters-refresh'),
  deadLettersStatus: $('dead-letters-status'), deadLettersTable: $('dead-letters-table'), deadLettersRows: $('dead-letters-rows'),
  destinations: $('destinations'), destinationsStatus: $('destinations-status'), destinationsRefresh: $('destinations-refresh'),
};

/** @typedef {import('./feed.js').LiveCall & { seq: number }} Call */
const state = {
  /** @type {string | null} */ token: null,
  /** @type {Call[]} newest first by receivedAt */ calls: [],
  /** @type {Call[]} arrived while paused, newest first by receivedAt */ held: [],
  paused: false,
  seq: 0,
  /** @type {AbortController | null} */ stream: null,
  /** @type {ReturnType<typeof setTimeout> | undefined} */ reconnectTimer: undefined,
  /** @type {Map<string, string>} destination id → name */ destinationNames: new Map(),
  /** @type {{ messageId: string, call: unknown, since: number, replayedAt: string | null } | null} */ selected: null,
  /** @type {ReturnType<typeof setTimeout> | undefined} */ traceTimer: undefined,
  /** @type {ReturnType<typeof setTimeout> | undefined} */ usageTimer: undefined,
};

class Unauthorized extends Error {}

/** fetch with the admin token; JSON in and out; 401 signs out. */
async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    cache: 'no-store',
    headers: { authorization: `Bearer ${state.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) throw new Unauthorized('the admin token was refused');
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { /* not JSON: reported below */ }
  return { status: res.status, ok: res.ok, body: json, text };
}

const errorText = (r) => r.body?.message ?? (r.text || `HTTP ${r.status}`);

function onFailure(err, where) {
  if (err instanceof Unauthorized) { signOut('Your session ended: the admin token was refused. Sign in again.'); return; }
  where.textContent = `Failed: ${err instanceof Error ? err.message : String(err)}`;
}

// ---- sign in / out ------------------------------------------------------------------------

el.loginForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const token = el.token.value.trim();
  if (!token) { el.loginError.textContent = 'Enter the admin token.'; el.token.focus(); return; }
  el.loginError.textContent = '';
  state.token = token;
  try {
    await start();
    sessionStorage.setItem(TOKEN_KEY, token);
    el.token.value = '';
  } catch (err) {
    state.token = null;
    el.loginError.textContent = err instanceof Unauthorized ? 'That token was refused. Check SWITCHYARD_ADMIN_TOKEN.' : `Could not reach the admin API: ${err.message}`;
    el.token.focus();
  }
});

el.logout.addEventListener('click', () => signOut(''));

function signOut(message) {
  stopStream();
  clearTimeout(state.usageTimer);
  stopTraceRefresh();
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  state.calls = [];
  state.held = [];
  state.selected = null;
  el.feed.replaceChildren();
  el.app.hidden = true;
  el.logout.hidden = true;
  el.login.hidden = false;
  el.loginError.textContent = message;
  el.token.focus();
}

/** Loads the sources (which also proves the token) and shows the app. */
async function start() {
  const r = await api('GET', '/v1/sources');
  if (!r.ok) throw new Error(errorText(r));
  const sources = r.body.sources;
  el.source.replaceChildren(...sources.map((s) => option(s.id, s.name === s.id ? s.id : `${s.name} (${s.id})`)));
  el.login.hidden = true;
  el.app.hidden = false;
  el.logout.hidden = false;
  if (sources.length === 0) {
    setStatus('idle', 'No sources yet: create one with the admin API or the CLI.');
    return;
  }
  const remembered = sessionStorage.getItem(SOURCE_KEY);
  if (remembered && sources.some((s) => s.id === remembered)) el.source.value = remembered;
  el.source.focus();
  await selectSource(el.source.value);
}

el.source.addEventListener('change', () => void selectSource(el.source.value));

async function selectSource(sourceId) {
  sessionStorage.setItem(SOURCE_KEY, sourceId);
  clearFeed();
  closeDetail();
  connect(sourceId);
  try {
    await Promise.all([loadDestinations(sourceId), loadUsage(sourceId)]);
  } catch (err) {
    onFailure(err, el.deadLettersStatus);
  }
}

// ---- live feed ----------------------------------------------------------------------------

function setStatus(kind, text) {
  el.status.dataset.state = kind;
  el.status.textContent = text;
}

function stopStream() {
  clearTimeout(state.reconnectTimer);
  state.stream?.abort();
  state.stream = null;
}

/** Reads GET /v1/sources/{id}/live with fetch (the token in a header), reconnecting on loss. */
function connect(sourceId) {
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

function clearFeed() {
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

// ---- one call: JSON and trace -------------------------------------------------------------

function openCall(call) {
  showDetail(call.messageId, `${call.type}${call.name ? ` “${call.name}”` : ''} · ${userLabel(call)} · received ${formatTime(call.receivedAt)}`, call.call);
}

/** replayedAt (server time): keep refreshing until the replayed task's first attempt shows. */
function showDetail(messageId, summary, json, replayedAt = null) {
  stopTraceRefresh();
  state.selected = { messageId, call: json, since: Date.now(), replayedAt };
  // The feed marks the call shown here (if it is in the feed).
  for (const b of el.feed.querySelectorAll('button.call')) {
    if (b instanceof HTMLElement && b.dataset.messageId === messageId) b.setAttribute('aria-current', 'true');
    else b.removeAttribute('aria-current');
  }
  el.detailEmpty.hidden = true;
  el.detailBody.hidden = false;
  el.detailTitle.textContent = `Call ${messageId}`;
  el.detailSummary.textContent = summary;
  el.json.textContent = JSON.stringify(json, null, 2);
  el.trace.replaceChildren();
  el.traceStatus.textContent = 'Loading deliveries…';
  void loadTrace();
}

function closeDetail() {
  stopTraceRefresh();
  state.selected = null;
  el.detailEmpty.hidden = false;
  el.detailBody.hidden = true;
  el.detailTitle.textContent = 'Call';
}

function stopTraceRefresh() {
  clearTimeout(state.traceTimer);
  state.traceTimer = undefined;
}

el.traceRefresh.addEventListener('click', () => { stopTraceRefresh(); if (state.selected) { state.selected.since = Date.now(); void loadTrace(); } });

/** GET /v1/messages/{id}; refreshes itself while some destination is not in a final state. */
async function loadTrace() {
  const selected = state.selected;
  if (!selected) return;
  let trace = null;
  try {
    const r = await api('GET', `/v1/messages/${encodeURIComponent(selected.messageId)}`);
    if (state.selected !== selected) return;
    if (r.status === 404) {
      el.trace.replaceChildren();
      el.traceStatus.textContent = 'No deliveries recorded yet: the call may still be on its way.';
    } else if (!r.ok) {
      el.traceStatus.textContent = `Could not load the deliveries: ${errorText(r)}`;
    } else {
      trace = r.body;
      renderTrace(trace);
    }
  } catch (err) {
    if (state.selected !== selected) return;
    onFailure(err, el.traceStatus);
    if (err instanceof Unauthorized) return;
  }
  if (state.selected !== selected) return;
  const waitingForReplay = selected.replayedAt !== null && !hasAttemptSince(trace, selected.replayedAt);
  if ((!traceIsFinal(trace) || waitingForReplay) && Date.now() - selected.since < TRACE_REFRESH_FOR_MS) {
    if (trace) el.traceStatus.textContent = waitingForReplay ? 'Replayed; waiting for its delivery…' : `Updated ${formatTime(new Date().toISOString())}; refreshing while deliveries are in progress.`;
    state.traceTimer = setTimeout(() => void loadTrace(), TRACE_REFRESH_MS);
  } else if (trace) {
    el.traceStatus.textContent = traceIsFinal(trace) ? 'Every destination reached a final state.' : 'Not final yet; use Refresh to check again.';
  }
}

const FILTER_TEXT = { filter: 'kept out by the destination\'s event filter', integrations: 'kept out by the call\'s integrations map' };
const RETRY_POLICY_TEXT = { default: 'retries follow the default policy', destination: 'retries follow the destination\'s own policy' };
const STATE_TEXT = { pending: 'pending', delivered: 'delivered', retrying: 'retrying', dead_lettered: 'dead-lettered', filtered: 'filtered' };

function renderTrace(trace) {
  if (trace.destinations.length === 0) {
    el.trace.replaceChildren(paragraph('hint', trace.receivedAt ? 'Received; no destination has this call (none enabled, or not fanned out yet).' : 'No destination has this call yet.'));
    return;
  }
  el.trace.replaceChildren(...trace.destinations.map((d) => {
    const section = document.createElement('section');
    section.className = 'destination';
    section.dataset.destinationId = d.destinationId;
    section.dataset.state = d.state;
    const heading = document.createElement('h4');
    const name = state.destinationNames.get(d.destinationId);
    heading.append(span('dest-name', name ? `${name} (${d.destinationId})` : d.destinationId), ' ', span(`state state-${d.state}`, STATE_TEXT[d.state] ?? d.state));
    section.append(heading);
    const where = [];
    if (d.state === 'retrying' && d.tier !== null) where.push(`waiting in retry tier ${d.tier}${d.nextAttemptAt ? ` until ${formatTime(d.nextAttemptAt)}` : ''}`);
    else if (d.nextAttemptAt) where.push(`next attempt ${formatTime(d.nextAttemptAt)}`);
    if (d.deadLetterReason) where.push(`dead-lettered: ${d.deadLetterReason}`);
    if (d.filterReason) where.push(FILTER_TEXT[d.filterReason] ?? `filtered: ${d.filterReason}`);
    if (d.retryPolicy) where.push(RETRY_POLICY_TEXT[d.retryPolicy] ?? `retry policy: ${d.retryPolicy}`);
    if (where.length) section.append(paragraph('where', where.join(' · ')));
    if (d.attempts.length === 0) {
      section.append(paragraph('hint', 'No attempt yet.'));
    } else {
      const table = document.createElement('table');
      table.className = 'table attempts';
      const caption = document.createElement('caption');
      caption.className = 'visually-hidden';
      caption.textContent = `Attempts for ${name ?? d.destinationId}`;
      const head = document.createElement('thead');
      head.append(row('th', ['#', 'URL', 'At', 'Tier', 'Outcome', 'Status', 'Error', 'Latency']));
      const body = document.createElement('tbody');
      for (const a of d.attempts) {
        const tr = row('td', [String(a.attempt), String(a.urlIndex + 1), formatTime(a.at), a.tier ? String(a.tier) : '—', a.outcome, a.status === null ? '—' : String(a.status), a.error ?? '', `${a.latencyMs} ms`]);
        tr.className = `attempt ${outcomeClass(a.outcome)}`;
        body.append(tr);
      }
      table.append(caption, head, body);
      section.append(table);
    }
    return section;
  }));
}

/** Colour only repeats what the text says: delivered, retrying, or given up. */
function outcomeClass(outcome) {
  if (outcome === 'delivered') return 'outcome-ok';
  if (/retry|deferred|pending/.test(outcome)) return 'outcome-retry';
  return 'outcome-failed';
}

// ---- destinations, usage, dead letters -----------------------------------------------------

async function loadDestinations(sourceId) {
  const r = await api('GET', `/v1/destinations?sourceId=${encodeURIComponent(sourceId)}`);
  if (!r.ok) throw new Error(errorText(r));
  const destinations = r.body.destinations;
  state.destinationNames = new Map(destinations.map((d) => [d.id, d.name]));
  renderDestinations(destinations);
  el.deadLetterDestination.replaceChildren(...destinations.map((d) => option(d.id, `${d.name} (${d.id})`)));
  if (destinations.length === 0) {
    el.deadLettersTable.hidden = true;
    el.deadLettersStatus.textContent = 'This source has no destinations.';
    return;
  }
  await loadDeadLetters();
}

el.destinationsRefresh.addEventListener('click', () => void loadDestinations(el.source.value).catch((err) => onFailure(err, el.destinationsStatus)));

/** Each destination of the source as configured: enabled, its event filter, signing, retry policy and replays. */
function renderDestinations(destinations) {
  el.destinationsStatus.textContent = destinations.length === 0 ? 'This source has no destinations.' : '';
  el.destinations.replaceChildren(...destinations.map((d) => {
    const section = document.createElement('section');
    section.className = 'destination-config';
    section.dataset.destinationId = d.id;
    const heading = document.createElement('h3');
    heading.append(span('dest-name', `${d.name} (${d.id})`), ' ', span(`state ${d.enabled ? 'state-delivered' : 'state-filtered'}`, d.enabled ? 'enabled' : 'disabled'));
    // Disabled by Switchyard: every attempt failed for SWITCHYARD_DISABLE_AFTER; enabling it again clears this.
    if (d.disabledReason) heading.append(' ', span('state state-dead_lettered', `${d.disabledReason} since ${d.disabledAt ?? '?'}`));
    const list = document.createElement('dl');
    const filter = d.filter ? preformatted('filter', JSON.stringify(d.filter, null, 2)) : span('filter none', 'none: every call');
    addTerm(list, 'Filter', filter);
    addTerm(list, 'Webhooks', `${d.settings.webhooks.length} URL${d.settings.webhooks.length === 1 ? '' : 's'}`);
    addTerm(list, 'Signing', signingList(d));
    addTerm(list, 'Client certificate', clientCertificateText(d.settings.webhooks));
    addTerm(list, 'Retries', d.retry ? span('retry-policy', `after ${d.retry.tiers.join(', ')} (the last repeats), until ${d.retry.deadline} after the first attempt`) : span('retry-policy none', 'the deployment\'s default policy'));
    // Held tasks wait in the first retry tier: a slow drain here is the limit, not a failure.
    addTerm(list, 'Rate limit', d.rateLimit ? `${d.rateLimit.perSecond} requests/s (over every delivery instance; more waits)` : span('hint', 'none'));
    const replays = addTerm(list, 'Replays', span('hint', 'Loading…'));
    replays.className = 'replays';
    section.append(heading, list);
    void loadReplays(d.id, replays).catch((err) => { replays.replaceChildren(span('hint', `Could not load replays: ${err.message}`)); });
    return section;
  }));
}

const REPLAY_REFRESH_MS = 2000;
const REPLAYS_SHOWN = 5;

/** GET /v1/destinations/{id}/replays: the latest ones with a progress bar; refreshed while one runs. */
async function loadReplays(destinationId, target, refresh = false) {
  // A refresh stops once the panel was redrawn (another source, Refresh) or the user signed out.
  if (state.token === null || (refresh && !target.isConnected)) return;
  const r = await api('GET', `/v1/destinations/${encodeURIComponent(destinationId)}/replays`);
  if (!r.ok) { target.replaceChildren(span('hint', errorText(r))); return; }
  const replays = r.body.replays;
  if (replays.length === 0) { target.replaceChildren(span('hint', 'none (start one with the API or switchyard replays start)')); return; }
  const ul = document.createElement('ul');
  ul.className = 'replay-list';
  for (const rp of replays.slice(0, REPLAYS_SHOWN)) ul.append(replayItem(rp));
  target.replaceChildren(ul);
  if (replays.some((rp) => rp.state === 'running')) setTimeout(() => void loadReplays(destinationId, target, true).catch(() => undefined), REPLAY_REFRESH_MS);
}

function replayItem(rp) {
  const li = document.createElement('li');
  li.className = `replay replay-${rp.state}`;
  li.dataset.replayId = rp.id;
  const bar = document.createElement('progress');
  bar.max = 1;
  bar.value = rp.progress;
  bar.setAttribute('aria-label', `Replay ${rp.id}: ${Math.floor(rp.progress * 100)}%`);
  const total = rp.total === null ? '?' : rp.total;
  const parts = [`${rp.state}`, `read ${rp.scanned}/${total}`, `matched ${rp.matched}`, `enqueued ${rp.enqueued}`];
  if (rp.recordsPerSecond !== null && rp.state === 'running') parts.push(`${Math.round(rp.recordsPerSecond)}/s`);
  if (rp.etaSeconds !== null) parts.push(`about ${rp.etaSeconds}s left`);
  if (rp.error) parts.push(rp.error);
  li.append(span('replay-id', `${rp.id} · ${formatTime(rp.from)} → ${formatTime(rp.to)}`), bar, span('replay-counts', parts.join(' · ')));
  if (rp.notReplayable.length) li.append(span('replay-gap', `not replayable (before the topic's retention): ${rp.notReplayable.map((g) => `partition ${g.partition} until ${formatTime(g.to)}`).join(', ')}`));
  return li;
}

/** Mutual TLS: whether the URLs present a client certificate (the API says only that one is set). */
function clientCertificateText(webhooks) {
  const set = webhooks.filter((w) => w.clientCertificate?.set).length;
  if (set === 0) return 'none';
  return set === webhooks.length ? 'set' : `set for ${set} of ${webhooks.length} URLs`;
}

/** X-Signature when a shared secret is set; the Standard Webhooks secrets by id (values are never sent to the page). */
function signingList(d) {
  const ul = document.createElement('ul');
  ul.className = 'secrets';
  const item = (text, className = '') => { const li = document.createElement('li'); li.className = className; li.textContent = text; ul.append(li); };
  item(d.settings.sharedSecret ? 'X-Signature (shared secret set)' : 'no X-Signature (no shared secret)');
  if (!d.signing?.standard) { item('Standard Webhooks: off'); return ul; }
  for (const s of d.signing.secrets) {
    item(`Standard Webhooks secret ${s.id} · created ${formatTime(s.createdAt)} · ${s.expiresAt === null ? 'current' : `signs until ${formatTime(s.expiresAt)}`}`, 'secret');
  }
  return ul;
}

function addTerm(list, term, value) {
  const dt = document.createElement('dt');
  dt.textContent = term;
  const dd = document.createElement('dd');
  dd.append(value);
  list.append(dt, dd);
  return dd;
}

function preformatted(className, text) {
  const pre = document.createElement('pre');
  pre.className = className;
  pre.textContent = text;
  return pre;
}

/** The latest day's counts from GET /v1/sources/{id}/usage (UTC days), refreshed while shown. */
async function loadUsage(sourceId) {
  clearTimeout(state.usageTimer);
  if (state.token === null || el.source.value !== sourceId) return;
  state.usageTimer = setTimeout(() => void loadUsage(sourceId).catch(() => undefined), USAGE_REFRESH_MS);
  const r = await api('GET', `/v1/sources/${encodeURIComponent(sourceId)}/usage`);
  const days = r.ok && Array.isArray(r.body?.days) ? r.body.days : [];
  const latest = [...days].sort((a, b) => String(b.day).localeCompare(String(a.day)))[0];
  if (!latest) {
    el.usage.textContent = r.ok ? 'Usage: no calls counted yet.' : '';
    el.usage.hidden = !r.ok;
    return;
  }
  const by = latest.filteredBy ?? { integrations: latest.filtered, filter: 0 };
  el.usage.textContent = `Usage on ${latest.day} (UTC): ${latest.accepted} accepted · ${latest.rejected} rejected · ${latest.filtered} filtered (${by.integrations} by integrations, ${by.filter} by destination filters)`;
  el.usage.hidden = false;
}

el.deadLetterDestination.addEventListener('change', () => void loadDeadLetters().catch((err) => onFailure(err, el.deadLettersStatus)));
el.deadLettersRefresh.addEventListener('click', () => void loadDeadLetters().catch((err) => onFailure(err, el.deadLettersStatus)));

async function loadDeadLetters() {
  const destinationId = el.deadLetterDestination.value;
  if (!destinationId) return undefined;
  el.deadLettersStatus.textContent = 'Loading dead letters…';
  const r = await api('GET', `/v1/dead-letters?destinationId=${encodeURIComponent(destinationId)}&limit=100`);
  if (!r.ok) { el.deadLettersStatus.textContent = `Could not load dead letters: ${errorText(r)}`; return undefined; }
  const { deadLetters, total } = r.body;
  el.deadLettersRows.replaceChildren(...deadLetters.map(deadLetterRow));
  el.deadLettersTable.hidden = deadLetters.length === 0;
  el.deadLettersStatus.textContent = total === 0 ? 'No dead letters for this destination.' : `${total} dead letter(s)${total > deadLetters.length ? `, newest ${deadLetters.length} shown` : ''}.`;
  return deadLetters;
}

function deadLetterRow(letter) {
  const tr = row('td', [
    formatTime(letter.failedAt), letter.messageId, letter.eventType, letter.reason,
    [letter.status, letter.error ?? letter.responseExcerpt].filter((x) => x !== null && x !== undefined && x !== '').join(' · '),
    String(letter.attempts), letter.replayedAt ? formatTime(letter.replayedAt) : 'no',
  ]);
  tr.dataset.deadLetterId = letter.id;
  tr.dataset.messageId = letter.messageId;
  const cell = document.createElement('td');
  cell.className = 'row-actions';
  const replay = document.createElement('button');
  replay.type = 'button';
  replay.className = 'replay';
  replay.textContent = letter.replayedAt ? 'Replay again' : 'Replay';
  replay.setAttribute('aria-label', `${replay.textContent} ${letter.messageId}`);
  replay.addEventListener('click', () => void replayDeadLetter(letter, replay));
  const show = document.createElement('button');
  show.type = 'button';
  show.className = 'show';
  show.textContent = 'Deliveries';
  show.setAttribute('aria-label', `Show the deliveries of ${letter.messageId}`);
  show.addEventListener('click', () => void openDeadLetter(letter));
  cell.append(replay, show);
  tr.append(cell);
  return tr;
}

async function replayDeadLetter(letter, button) {
  button.disabled = true;
  try {
    const r = await api('POST', '/v1/dead-letters/replay', { ids: [letter.id] });
    if (!r.ok) { el.deadLettersStatus.textContent = `Replay failed: ${errorText(r)}`; return; }
    if (r.body.notFound.length > 0) { el.deadLettersStatus.textContent = 'That dead letter is no longer known to the service.'; return; }
    const letters = await loadDeadLetters();
    el.deadLettersStatus.textContent = `Replayed ${letter.messageId}; its deliveries are shown above.`;
    const replayed = letters?.find((l) => l.id === letter.id);
    await openDeadLetter(letter, replayed?.replayedAt ?? new Date().toISOString());
  } catch (err) {
    onFailure(err, el.deadLettersStatus);
  } finally {
    button.disabled = false;
  }
}

/**
 * Shows a dead letter's message in the detail panel with its trace: the call as received when the
 * feed still has it, else the webhook body the dead letter carries.
 */
async function openDeadLetter(letter, replayedAt = null) {
  const destination = state.destinationNames.get(letter.destinationId) ?? letter.destinationId;
  const inFeed = state.calls.find((c) => c.messageId === letter.messageId);
  if (inFeed) {
    showDetail(letter.messageId, `${inFeed.type}${inFeed.name ? ` “${inFeed.name}”` : ''} · ${userLabel(inFeed)} · dead letter of ${destination} (${letter.reason})`, inFeed.call, replayedAt);
  } else {
    let json = null;
    const r = await api('GET', `/v1/dead-letters/${encodeURIComponent(letter.id)}`);
    if (r.ok) { try { json = JSON.parse(r.body.body); } catch { json = r.body.body; } }
    showDetail(letter.messageId, `${letter.eventType} · dead letter of ${destination} (${letter.reason}); the JSON is the webhook body`, json, replayedAt);
  }
  el.detailTitle.focus();
}

// ---- small helpers ------------------------------------------------------------------------

function option(value, text) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

function span(className, text) {
  const s = document.createElement('span');
  s.className = className;
  s.textContent = text;
  return s;
}

function paragraph(className, text) {
  const p = document.createElement('p');
  p.className = className;
  p.textContent = text;
  return p;
}

function row(cellTag, values) {
  const tr = document.createElement('tr');
  for (const v of values) {
    const c = document.createElement(cellTag);
    if (cellTag === 'th') c.scope = 'col';
    c.textContent = v;
    tr.append(c);
  }
  return tr;
}

/** Local time with milliseconds (calls of one second are common); the full date on hover is not needed here. */
function formatTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const today = new Date().toDateString() === d.toDateString();
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  return today ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

// ---- boot ---------------------------------------------------------------------------------

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) {
  state.token = saved;
  start().catch((err) => {
    if (err instanceof Unauthorized) signOut('Your session ended: the admin token was refused. Sign in again.');
    else { signOut(`Could not reach the admin API: ${err.message}`); }
  });
} else {
  el.token.focus();
}
