// The debugger page: sign in with the admin token, pick a source, watch its calls arrive live,
// open one to see its JSON and its deliveries, replay dead letters. Plain DOM, no framework, no
// build step; every value from the server is written with textContent, never as HTML.
// This module is the entry point (sign in, the source and its usage line, boot); the feed is in
// live.js, one call in detail.js, the panels in destinations.js and dead-letters.js, shared state
// in page.js, DOM helpers in dom.js.
import { closeDetail } from './detail.js';
import { loadDestinations } from './destinations.js';
import { option } from './dom.js';
import { clearFeed, connect, setStatus } from './live.js';
import { TOKEN_KEY, Unauthorized, api, el, errorText, onFailure, signOut, state } from './page.js';

const SOURCE_KEY = 'switchyard.debugger.source';
const USAGE_REFRESH_MS = 5000;

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
