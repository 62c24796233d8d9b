// The destinations panel of the chosen source: each destination as configured, with its latest
// replays; loading it also fills the dead-letters panel's choice of destination.
import { loadDeadLetters } from './dead-letters.js';
import { addTerm, formatTime, option, preformatted, span } from './dom.js';
import { api, el, errorText, onFailure, state } from './page.js';

export async function loadDestinations(sourceId) {
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
