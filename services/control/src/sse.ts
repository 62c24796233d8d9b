/**
 * Server-Sent Events framing (pure). One event is `event:`, `id:` and one `data:` line per line of
 * the payload, ended by a blank line; a line starting with `:` is a comment (heartbeats). The
 * payload is JSON, whose text never holds a raw newline, but splitting keeps any text safe.
 */
export function sseEvent(event: string, data: unknown, id?: string): string {
  if (/[\r\n]/.test(event) || (id !== undefined && /[\r\n\0]/.test(id))) throw new Error('an SSE event name or id cannot hold a line break');
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const lines = text.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join('');
  return `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}${lines}\n`;
}

export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
