// Reading the control service's live feed (GET /v1/sources/{id}/live, Server-Sent Events) in
// tests, as the debugger page does: fetch with the token in the Authorization header.
import { SseParser, type SseMessage } from '../../services/control/debugger/feed.js';

export interface LiveStream {
  status: number;
  events: SseMessage[];
  /** Resolves with the first event the predicate accepts (already received or still to come). */
  waitFor(predicate: (e: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  close(): void;
}

export async function openLiveStream(controlUrl: string, sourceId: string, token: string): Promise<LiveStream> {
  const abort = new AbortController();
  const res = await fetch(`${controlUrl}/v1/sources/${encodeURIComponent(sourceId)}/live`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: abort.signal });
  const events: SseMessage[] = [];
  if (res.status === 200 && res.body) {
    const parser = new SseParser((e) => events.push(e));
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      try { for (;;) { const { value, done } = await reader.read(); if (done) return; parser.push(value); } } catch { /* aborted */ }
    })();
  } else {
    await res.text().catch(() => undefined);
  }
  return {
    status: res.status,
    events,
    async waitFor(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(predicate);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching live event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(', ') || 'none'}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => abort.abort(),
  };
}
