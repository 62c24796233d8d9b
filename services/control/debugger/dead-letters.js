// The dead-letters panel: one destination's dead letters, replaying one, and showing its
// deliveries in the detail panel.
import { showDetail } from './detail.js';
import { formatTime, row } from './dom.js';
import { userLabel } from './feed.js';
import { api, el, errorText, onFailure, state } from './page.js';

el.deadLetterDestination.addEventListener('change', () => void loadDeadLetters().catch((err) => onFailure(err, el.deadLettersStatus)));
el.deadLettersRefresh.addEventListener('click', () => void loadDeadLetters().catch((err) => onFailure(err, el.deadLettersStatus)));

export async function loadDeadLetters() {
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
