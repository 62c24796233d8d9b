// Writes deploy/components/prometheus-operator/prometheusrule.yaml from the alert rules in
// deploy/prometheus/switchyard-alerts.yml (the one source of truth), so the Prometheus Operator
// and plain Prometheus (docker-compose.yml) evaluate the same rules. Run after editing the rules:
//   node deploy/prometheus/sync-prometheusrule.mjs
// test/deploy.test.ts fails when the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';

const source = new URL('./switchyard-alerts.yml', import.meta.url);
const target = new URL('../components/prometheus-operator/prometheusrule.yaml', import.meta.url);

const { groups } = parse(readFileSync(source, 'utf8'));
const rule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'switchyard', labels: { 'app.kubernetes.io/name': 'switchyard', 'app.kubernetes.io/component': 'alerts' } },
  spec: { groups },
};
const header = '# Generated from deploy/prometheus/switchyard-alerts.yml by deploy/prometheus/sync-prometheusrule.mjs: edit that file, then run the script.\n';
writeFileSync(target, header + stringify(rule, { lineWidth: 0 }));
console.log(`wrote ${target.pathname}`);
