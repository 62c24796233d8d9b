// Human-readable output: aligned tables for lists, "key: value" blocks for one object.
// Every function returns the whole text, newline-terminated, so callers write it in one go.
import type { Audience, ComputedTrait, DeadLetterDetail, DeadLetterList, DeletionRequest, Destination, NotificationEndpoint, NotificationEndpointCreated, ReplayStatus, Source, Token, TokenCreated } from './admin-client.js';

/** Columns padded to their widest cell and separated by two spaces; the last is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]): string =>
    widths.map((w, i) => (i === widths.length - 1 ? (row[i] ?? '') : (row[i] ?? '').padEnd(w))).join('  ').trimEnd();
  return all.map(line).join('\n') + '\n';
}

/**
 * One field per line with the values aligned; a field with several values continues on
 * indented lines below its label, and one with none shows "(none)".
 */
export function block(fields: readonly (readonly [label: string, value: string | readonly string[]])[]): string {
  const width = Math.max(...fields.map(([label]) => label.length + 1));
  const lines: string[] = [];
  for (const [label, value] of fields) {
    const values = typeof value === 'string' ? [value] : value.length > 0 ? value : ['(none)'];
    values.forEach((v, i) => lines.push(`${(i === 0 ? `${label}:` : '').padEnd(width)} ${v}`.trimEnd()));
  }
  return lines.join('\n') + '\n';
}

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');
const orDash = (s: string | null | undefined): string => (s === null || s === undefined || s === '' ? '-' : s);

export function sourceTable(sources: readonly Source[]): string {
  return table(
    ['ID', 'NAME', 'ENABLED', 'WRITE-KEYS'],
    sources.map((s) => [s.id, s.name, yesNo(s.enabled), String(s.writeKeys.length)]),
  );
}

export function sourceBlock(s: Source): string {
  return block([
    ['id', s.id],
    ['name', s.name],
    ['enabled', yesNo(s.enabled)],
    ['write keys', s.writeKeys],
    ['created', s.createdAt],
    ['updated', s.updatedAt],
  ]);
}

export function destinationTable(destinations: readonly Destination[]): string {
  return table(
    ['ID', 'SOURCE', 'NAME', 'ENABLED', 'URLS'],
    destinations.map((d) => [d.id, d.sourceId, orDash(d.name), yesNo(d.enabled), String(d.settings.webhooks.length)]),
  );
}

/** A destination's Standard Webhooks secrets: ids and times, never values. */
export function secretTable(standard: boolean, secrets: ReadonlyArray<{ id: string; createdAt: string; expiresAt: string | null }>): string {
  if (!standard) return 'Standard Webhooks signatures are off for this destination.\n';
  return table(['ID', 'CREATED', 'SIGNS UNTIL'], secrets.map((s) => [s.id, s.createdAt, s.expiresAt ?? '(current)']));
}

export function destinationBlock(d: Destination): string {
  return block([
    ['id', d.id],
    ['source', d.sourceId],
    ['name', orDash(d.name)],
    ['type', d.type],
    ['enabled', yesNo(d.enabled)],
    ...(d.disabledReason ? [['disabled', `${d.disabledReason} at ${d.disabledAt ?? '-'}`] as [string, string]] : []),
    // Shown as the API gives it: masked when set, so the secret never reaches a terminal.
    ['shared secret', d.settings.sharedSecret ?? '(none)'],
    ['webhooks', d.settings.webhooks.map(webhookLine)],
    ['filter', d.filter ? JSON.stringify(d.filter) : '(none: every call)'],
    ['std webhooks', d.signing?.standard ? d.signing.secrets.map(secretLine) : 'off'],
    ['retry', d.retry ? `${d.retry.tiers.join(', ')} until ${d.retry.deadline}` : '(the deployment\'s policy)'],
    ['rate limit', d.rateLimit ? `${d.rateLimit.perSecond}/s` : '(none)'],
    ['created', d.createdAt],
    ['updated', d.updatedAt],
  ]);
}

/** A signing secret by id (never its value), with when it stops signing if it is being rotated out. */
function secretLine(s: { id: string; createdAt: string; expiresAt: string | null }): string {
  return `${s.id}  created ${s.createdAt}${s.expiresAt === null ? '  (current)' : `  signs until ${s.expiresAt}`}`;
}

// Header names only: their values are often credentials. A client certificate only as "set" (the
// API never returns it).
function webhookLine(w: { url: string; headers?: Record<string, string>; clientCertificate?: { set: true } | null }): string {
  const names = Object.keys(w.headers ?? {});
  const notes = [...(names.length === 0 ? [] : [`headers: ${names.join(', ')}`]), ...(w.clientCertificate ? ['client certificate: set'] : [])];
  return notes.length === 0 ? w.url : `${w.url}  (${notes.join('; ')})`;
}

export function notificationEndpointTable(endpoints: readonly NotificationEndpoint[]): string {
  return table(['ID', 'URL', 'EVENT-TYPES'], endpoints.map((e) => [e.id, e.url, e.eventTypes.join(',')]));
}

export function notificationEndpointBlock(e: NotificationEndpoint): string {
  return block([
    ['id', e.id],
    ['url', e.url],
    ['event types', e.eventTypes],
    ['enabled', yesNo(e.enabled)],
    ['created', e.createdAt],
    ['updated', e.updatedAt],
  ]);
}

/** An endpoint just made: its fields, then its signing secret, which the API shows this once. */
export function notificationEndpointCreatedBlock(e: NotificationEndpointCreated): string {
  const s = e.signingSecret;
  return `${notificationEndpointBlock(e)}\nnew Standard Webhooks secret ${s.id} (shown only now, keep it safe):\n${s.secret}\n`;
}

export function deadLetterTable(list: DeadLetterList): string {
  const rows = list.deadLetters.map((d) => [
    d.id,
    d.failedAt,
    d.destinationId,
    printable(d.reason),
    d.status === null ? '-' : String(d.status),
    String(d.attempts),
    orDash(d.replayedAt),
  ]);
  const shown = `${list.deadLetters.length} of ${list.total} dead letter${list.total === 1 ? '' : 's'}\n`;
  return table(['ID', 'FAILED-AT', 'DESTINATION', 'REASON', 'STATUS', 'ATTEMPTS', 'REPLAYED'], rows) + shown;
}

/** The fields, then a blank line and the body that was being delivered, indented. */
export function deadLetterBlock(d: DeadLetterDetail): string {
  const lines = (s: string | null): string | string[] => (s === null || s === '' ? '-' : s.split(/\r?\n/).map(printable));
  const fields = block([
    ['id', d.id],
    ['reason', printable(d.reason)],
    ['status', d.status === null ? '-' : String(d.status)],
    // Both come from the webhook's server or the network: shown escaped, on as many lines as they have.
    ['response', lines(d.responseExcerpt)],
    ['error', lines(d.error)],
    ['failed at', d.failedAt],
    ['destination', d.destinationId],
    ['source', d.sourceId],
    ['message', d.messageId],
    ['event type', printable(d.eventType)],
    ['attempts', String(d.attempts)],
    ['replayed at', orDash(d.replayedAt)],
  ]);
  // A metadata token gets no body.
  return `${fields}\nbody:\n${d.body === null ? '  (not shown to this token)' : printable(indentJson(d.body))}\n`;
}

export function deletionLine(r: DeletionRequest): string {
  const notifications = `${r.notifications} notification${r.notifications === 1 ? '' : 's'}`;
  const sources = r.sourceIds.length === 0 ? 'no sources' : `source${r.sourceIds.length === 1 ? '' : 's'} ${r.sourceIds.join(', ')}`;
  return `deletion ${r.requestId}: ${notifications} for ${sources}\n`;
}

export function audienceTable(audiences: readonly Audience[]): string {
  return table(['ID', 'SOURCE', 'NAME', 'PROPERTY'], audiences.map((a) => [a.id, a.sourceId, a.name, a.property]));
}

/** The fields, then a blank line and the condition laid out as JSON. */
export function audienceBlock(a: Audience): string {
  const fields = block([
    ['id', a.id],
    ['source', a.sourceId],
    ['name', a.name],
    ['property', a.property],
    ['created', a.createdAt],
    ['updated', a.updatedAt],
  ]);
  return `${fields}
condition:
${prettyJson(a.condition)}
`;
}

const traitKind = (t: ComputedTrait): string => (typeof t.definition.kind === 'string' ? t.definition.kind : '-');

export function computedTraitTable(traits: readonly ComputedTrait[]): string {
  return table(['ID', 'SOURCE', 'NAME', 'TRAIT', 'KIND'], traits.map((t) => [t.id, t.sourceId, t.name, t.trait, traitKind(t)]));
}

/** The fields, then a blank line and the definition laid out as JSON. */
export function computedTraitBlock(t: ComputedTrait): string {
  const fields = block([
    ['id', t.id],
    ['source', t.sourceId],
    ['name', t.name],
    ['trait', t.trait],
    ['kind', traitKind(t)],
    ['created', t.createdAt],
    ['updated', t.updatedAt],
  ]);
  return `${fields}
definition:
${prettyJson(t.definition)}
`;
}

// Values in a definition (event names, trait values) come from users: shown escaped.
const prettyJson = (value: unknown): string => printable(JSON.stringify(value, null, 2));

/**
 * JSON text laid out two spaces per level, like JSON.stringify(value, null, 2), but token by
 * token so that what is shown is what was sent: numbers beyond double precision and string
 * escapes are kept as written. Text that is not JSON is returned as it is.
 */
export function indentJson(text: string): string {
  try {
    JSON.parse(text);
  } catch {
    return text;
  }
  let out = '';
  let depth = 0;
  const newline = (): string => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      // Copy the whole string, escapes included.
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '{' || c === '[') {
      const rest = text.slice(i + 1).trimStart();
      if (rest[0] === (c === '{' ? '}' : ']')) {
        out += c === '{' ? '{}' : '[]';
        i = text.length - rest.length;
      } else {
        depth++;
        out += c + newline();
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
    } else if (c === ',') {
      out += ',' + newline();
    } else if (c === ':') {
      out += ': ';
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return out;
}

/**
 * Text from outside (a webhook's answer, an event) made safe for a terminal: control
 * characters other than newline and tab are shown as \u escapes instead of being sent raw.
 */
export function printable(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A text progress bar: [#########-----------]  45% */
export function progressBar(fraction: number, width = 24): string {
  const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * width);
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}] ${String(Math.floor(f * 100)).padStart(3)}%`;
}

/** One line of a replay's state: the bar, counts, rate and time left. */
export function replayLine(r: ReplayStatus): string {
  const total = r.total === null ? '?' : String(r.total);
  const rate = r.recordsPerSecond === null ? '' : ` · ${Math.round(r.recordsPerSecond)}/s`;
  const eta = r.etaSeconds === null ? '' : ` · ${formatSeconds(r.etaSeconds)} left`;
  return `${progressBar(r.progress)} ${r.state} · read ${r.scanned}/${total} · matched ${r.matched} · enqueued ${r.enqueued}${rate}${eta}`;
}

export function replayBlock(r: ReplayStatus): string {
  return block([
    ['id', r.id],
    ['destination', r.destinationId],
    ['state', r.state],
    ['range', `${r.from} .. ${r.to}`],
    ['filter', r.filter ? JSON.stringify(r.filter) : "(the destination's only)"],
    ['progress', replayLine(r)],
    ...(r.error ? [['error', r.error] as [string, string]] : []),
    ...(r.notReplayable.length ? [['not replayable', r.notReplayable.map((g) => `partition ${g.partition}: ${g.from} .. ${g.to} (before the topic's retention)`)] as [string, string[]]] : []),
  ]);
}

export function replayTable(replays: readonly ReplayStatus[]): string {
  return table(['ID', 'STATE', 'FROM', 'TO', 'READ', 'ENQUEUED'], replays.map((r) => [r.id, r.state, r.from, r.to, `${r.scanned}/${r.total ?? '?'}`, String(r.enqueued)]));
}

function formatSeconds(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Stored tokens: never a token's value (the API never sends it again). */
export function tokenTable(tokens: readonly Token[]): string {
  return table(['ID', 'NAME', 'SCOPES', 'SOURCES', 'CREATED'], tokens.map((t) => [t.id, printable(t.name), t.scopes.join(','), t.sourceIds === null ? '(all)' : t.sourceIds.join(','), t.createdAt]));
}

/** A token just made: its fields, then the token itself, which the API shows this once. */
export function tokenCreatedBlock(t: TokenCreated): string {
  return block([
    ['id', t.id],
    ['name', printable(t.name)],
    ['scopes', t.scopes.join(', ')],
    ['sources', t.sourceIds ?? '(all)'],
    ['created', t.createdAt],
    ['token', t.token],
  ]) + 'The token is shown only this once: store it now.\n';
}
