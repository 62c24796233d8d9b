// Reading a service's Prometheus metrics in tests.

/** A /metrics scrape: the sum of a metric's samples whose labels include the given ones. */
export async function scrape(url: string): Promise<(name: string, labels?: Record<string, string>) => number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const samples = [...text.matchAll(/^(\w+)(?:\{(.*)\})? (\S+)$/gm)].map(([, name, labels, value]) => ({
    name: name!, value: Number(value), labels: Object.fromEntries([...(labels ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!])),
  }));
  return (name, labels = {}) => samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** One metric's total over the samples with the given labels, summed over several instances. */
export async function metricTotal(urls: readonly string[], name: string, labels: Record<string, string> = {}): Promise<number> {
  const read = await Promise.all(urls.map((url) => scrape(url)));
  return read.reduce((sum, metric) => sum + metric(name, labels), 0);
}
