import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { jobAsPod, planKube, podmanOverlay, type KubeObject } from './kube.js';

describe('the manifests under podman kube play', () => {
  it('the overlay points the small overlay at the given Kafka, registry, image and admin token', () => {
    const overlay = parseYaml(podmanOverlay('/work/x/.tmp', { kafkaBrokers: 'kafka:9092', registryUrl: 'http://registry:8080', adminToken: 't', image: 'localhost/switchyard:0.1.0', allowedCidrs: '10.0.0.0/24' }));
    assert.equal(overlay.resources[0].endsWith('deploy/overlays/small'), true);
    assert.ok(!overlay.resources[0].startsWith('/'), 'kustomize takes relative resource paths only');
    assert.deepEqual(overlay.configMapGenerator[0].literals, ['KAFKA_BROKERS=kafka:9092', 'SCHEMA_REGISTRY_URL=http://registry:8080', 'SWITCHYARD_ALLOWED_CIDRS=10.0.0.0/24']);
    assert.deepEqual(overlay.images[0], { name: 'registry.example.com/switchyard', newName: 'localhost/switchyard', newTag: '0.1.0' });
    assert.equal(overlay.secretGenerator[0].name, 'switchyard-control');
  });

  it('a Job becomes a Pod with its template; Secrets become podman secrets; the rest is listed as left out', () => {
    const job: KubeObject = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'setup' }, spec: { template: { metadata: { labels: { a: 'b' } }, spec: { restartPolicy: 'OnFailure', containers: [{ name: 'setup' }] } } } };
    const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { TOKEN: 'dA==' } };
    const plan = planKube([job, secret, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' } }, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }]);
    assert.deepEqual(plan.jobs, [jobAsPod(job)]);
    assert.deepEqual(jobAsPod(job), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'setup', labels: { a: 'b' } }, spec: job.spec!.template!.spec });
    assert.equal(plan.secrets.get('s'), '{"TOKEN":"dA=="}');
    assert.deepEqual(plan.workloads.map((o) => o.metadata.name), ['d']);
    assert.deepEqual(plan.leftOut, ['Service/svc']);
  });
});
