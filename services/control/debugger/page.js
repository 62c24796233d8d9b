// What every part of the debugger page shares: its elements, its state, the admin API call with
// the token, and signing out (which stops the live stream and the timers the state holds).

export const TOKEN_KEY = 'switchyard.adminToken';

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
export const el = {
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
export const state = {
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

export class Unauthorized extends Error {}

/** fetch with the admin token; JSON in and out; 401 signs out. */
export async function api(method, path, body) {
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

export const errorText = (r) => r.body?.message ?? (r.text || `HTTP ${r.status}`);

export function onFailure(err, where) {
  if (err instanceof Unauthorized) { signOut('Your session ended: the admin token was refused. Sign in again.'); return; }
  where.textContent = `Failed: ${err instanceof Error ? err.message : String(err)}`;
}

export function signOut(message) {
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

export function stopStream() {
  clearTimeout(state.reconnectTimer);
  state.stream?.abort();
  state.stream = null;
}

export function stopTraceRefresh() {
  clearTimeout(state.traceTimer);
  state.traceTimer = undefined;
}
