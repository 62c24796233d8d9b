import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser } from '../debugger/feed.js';
import { sseComment, sseEvent } from './sse.js';

describe('SSE framing', () => {
  it('frames an event with its name, id and JSON data, ended by a blank line', () => {
    assert.equal(sseEvent('call', { a: 1 }, 'm-1'), 'event: call\nid: m-1\ndata: {"a":1}\n\n');
    assert.equal(sseEvent('ready', { sourceId: 's' }), 'event: ready\ndata: {"sourceId":"s"}\n\n');
  });

  it('splits multi-line text into one data line per line', () => {
    assert.equal(sseEvent('note', 'one\ntwo\r\nthree'), 'event: note\ndata: one\ndata: two\ndata: three\n\n');
  });

  it('refuses line breaks in the event name or id (they would forge fields)', () => {
    assert.throws(() => sseEvent('a\nb', {}));
    assert.throws(() => sseEvent('call', {}, 'x\ndata: forged'));
  });

  it('comments flatten line breaks', () => {
    assert.equal(sseComment('heartbeat'), ': heartbeat\n\n');
    assert.equal(sseComment('a\nb'), ': a b\n\n');
  });

  it('what the server frames, the page\'s parser reads back, however the stream is chunked', () => {
    const payloads = [{ n: 1, text: 'line\nbreak' }, { n: 2, emoji: 'é✓' }, { n: 3 }];
    const stream = sseComment('live calls') + payloads.map((p, i) => sseEvent('call', p, `id-${i}`)).join('') + sseComment('heartbeat') + sseEvent('end', { reason: 'shutdown' });
    for (const size of [1, 2, 3, 7, 64, stream.length]) {
      const seen: Array<{ event: string; data: string; id: string | undefined }> = [];
      const parser = new SseParser((e) => seen.push(e));
      for (let i = 0; i < stream.length; i += size) parser.push(stream.slice(i, i + size));
      assert.deepEqual(seen.map((e) => [e.event, JSON.parse(e.data), e.id]), [
        ...payloads.map((p, i) => ['call', p, `id-${i}`]),
        ['end', { reason: 'shutdown' }, undefined],
      ], `chunks of ${size}`);
    }
  });
});
