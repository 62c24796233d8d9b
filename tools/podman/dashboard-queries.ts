// Every query the Grafana dashboard and the alert rules run, with Grafana's variables given the
// values a user sees by default (every namespace, destination and source), for asking a real
// Prometheus whether each returns anything.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../stack/paths.js';

export interface Query { origin: string; expr: string }

interface Dashboard { panels: Array<{ title: string; type: string; targets?: Array<{ expr?: string; refId?: string }> }> }
interface RuleFile { groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }> }

/** $__rate_interval and friends as Grafana would set them for a short time range; ".*" for "All". */
export function substituteGrafanaVariables(expr: string): string {
  return expr
    .replace(/\$__rate_interval/g, '2m')
    .replace(/\$__range/g, '15m')
    .replace(/\$__interval/g, '1m')
    .replace(/\$\{?(namespace|destination|source)\}?/g, '.*');
}

export function dashboardQueries(): Query[] {
  const dashboard = JSON.parse(readFileSync(join(repoRoot, 'deploy/components/grafana-dashboard/switchyard.json'), 'utf8')) as Dashboard;
  return dashboard.panels.flatMap((p) => (p.targets ?? []).filter((t) => t.expr).map((t) => ({
    origin: `panel "${p.title}"${t.refId ? ` (${t.refId})` : ''}`,
    expr: substituteGrafanaVariables(t.expr!),
  })));
}

export function alertQueries(): Query[] {
  const rules = parseYaml(readFileSync(join(repoRoot, 'deploy/prometheus/switchyard-alerts.yml'), 'utf8')) as RuleFile;
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ origin: `alert ${r.alert ?? r.record}`, expr: r.expr })));
}

/** The number of series an instant query returns; throws on a query Prometheus refuses. */
export async function seriesCount(prometheus: string, expr: string): Promise<number> {
  const res = await fetch(`${prometheus}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  const body = await res.json() as { status: string; error?: string; data?: { result: unknown[] } };
  if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${body.error}`);
  return body.data!.result.length;
}
