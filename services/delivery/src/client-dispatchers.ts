import type { Dispatcher } from 'undici';
import type { ClientCertificate } from '@switchyard/platform/schemas/generated';

/**
 * The dispatchers of webhooks with a client certificate (mutual TLS): one per destination and URL,
 * built with the certificate in its TLS options, kept while the certificate stays the same and
 * replaced (the old one closed once its requests finish) when it changes. Keyed by destination as
 * well as URL, so two destinations posting to one URL with different certificates do not replace
 * each other's on every request. URLs without a certificate never come here: they share the
 * client's one agent, at no extra cost.
 */
export class ClientDispatchers {
  private readonly entries = new Map<string, Entry>();

  /**
   * `build` makes a dispatcher presenting the certificate; `idleMs`: an entry unused this long is
   * closed at the next build (its destination was deleted, or its certificate removed).
   */
  constructor(private readonly build: (certificate: ClientCertificate) => Dispatcher, private readonly clock: () => number = Date.now, private readonly idleMs = 10 * 60_000) {}

  for(destinationId: string, url: string, certificate: ClientCertificate): Dispatcher {
    const key = `${destinationId} ${url}`;
    const entry = this.entries.get(key);
    const now = this.clock();
    if (entry && sameCertificate(entry.certificate, certificate)) {
      // A config change decodes a new record: keep the newest object so the next check is by identity.
      entry.certificate = certificate;
      entry.usedAt = now;
      return entry.dispatcher;
    }
    if (entry) closeQuietly(entry.dispatcher);
    this.sweep(now);
    const fresh: Entry = { certificate, dispatcher: this.build(certificate), usedAt: now };
    this.entries.set(key, fresh);
    return fresh.dispatcher;
  }

  get size(): number { return this.entries.size; }

  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.dispatcher.close().catch(() => undefined)));
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - entry.usedAt > this.idleMs) { this.entries.delete(key); closeQuietly(entry.dispatcher); }
    }
  }
}

interface Entry { certificate: ClientCertificate; dispatcher: Dispatcher; usedAt: number }

function sameCertificate(a: ClientCertificate, b: ClientCertificate): boolean {
  return a === b || (a.cert === b.cert && a.key === b.key);
}

/** Closing waits for the dispatcher's requests in flight; nobody awaits it, so a failure is of no use. */
function closeQuietly(dispatcher: Dispatcher): void {
  dispatcher.close().catch(() => undefined);
}
