// One call in the detail panel: its JSON and its trace (GET /v1/messages/{id}), which refreshes
// itself until every destination reached a final state.
import { formatTime, paragraph, row, span } from './dom.js';
import { hasAttemptSince, traceIsFinal, userLabel } from './feed.js';
import { Unauthorized, api, el, errorText, onFailure, state, stopTraceRefresh } from './page.js';

const TRACE_REFRESH_MS = 1500;
/** Auto-refresh of an unfinished trace stops after this long (the Refresh button still works). */
const TRACE_REFRESH_FOR_MS = 10 * 60_000;

export function openCall(call) {
  showDetail(call.messageId, `${call.type}${call.name ? ` “${call.name}”` : ''} · ${userLabel(call)} · received ${formatTime(call.receivedAt)}`, call.call);
}

/** replayedAt (server time): keep refreshing until the replayed task's first attempt shows. */
export function showDetail(messageId, summary, json, replayedAt = null) {
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

export function closeDetail() {
  stopTraceRefresh();
  state.selected = null;
  el.detailEmpty.hidden = false;
  el.detailBody.hidden = true;
  el.detailTitle.textContent = 'Call';
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
