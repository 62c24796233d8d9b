import type { Destination } from '@switchyard/platform/config-view/config-state';
import type { ClientCertificate, DeliveryTask } from '@switchyard/platform/schemas/generated';
import { breakerKey } from './circuit-breaker.js';

/** What run() needs of a destination, derived once per destination object. */
export interface PreparedDestination {
  /** Its distinct webhook URLs, in order. */
  urls: readonly string[];
  /** A URL's position in the destination's list (the last, if listed twice), for the trace. */
  index: Map<string, number>;
  /** A URL's headers (the last entry's, if listed twice). */
  headers: Map<string, Record<string, string>>;
  /** A URL's circuit breaker key (its origin). */
  breakerKeys: Map<string, string>;
  /** A URL's client certificate (mutual TLS), for the URLs that have one (the last entry's, if listed twice). */
  certificates: Map<string, ClientCertificate>;
}

export function prepareDestination(destination: Destination): PreparedDestination {
  const urls = [...new Set(destination.webhooks.map((w) => w.url))];
  return {
    urls,
    index: new Map(destination.webhooks.map((w, i) => [w.url, i])),
    headers: new Map(destination.webhooks.map((w) => [w.url, w.headers])),
    breakerKeys: new Map(urls.map((url) => [url, breakerKey(url)])),
    certificates: new Map(destination.webhooks.map((w) => [w.url, w.clientCertificate] as const).filter((e): e is [string, ClientCertificate] => e[1] !== null)),
  };
}

/** The URLs an attempt tries: those still pending, less any removed from the destination since (all, if none is left). */
export function urlsToTry(task: DeliveryTask, destination: PreparedDestination): readonly string[] {
  if (task.pendingUrls === null) return destination.urls;
  const urls = task.pendingUrls.filter((u) => destination.index.has(u));
  return urls.length > 0 ? urls : destination.urls;
}
