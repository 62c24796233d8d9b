import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { deployedNodeOptions } from './deployed-node-options.js';

test('reads the NODE_OPTIONS of the Deployment in a service manifest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'node-options-'));
  writeFileSync(join(dir, 'svc.yaml'), [
    'apiVersion: v1', 'kind: Service', 'metadata: { name: x }', '---',
    'apiVersion: apps/v1', 'kind: Deployment', 'spec:', '  template:', '    spec:', '      containers:',
    '        - name: svc', '          env:', '            - name: OTHER', '              value: "1"',
    '            - name: NODE_OPTIONS', '              value: "--max-old-space-size=100"',
  ].join('\n'));
  assert.equal(deployedNodeOptions('svc', dir), '--max-old-space-size=100');
  assert.equal(deployedNodeOptions('absent', dir), '');
});

test('the repository manifests give delivery its heap settings', () => {
  assert.match(deployedNodeOptions('delivery'), /--max-old-space-size=\d+/);
  assert.match(deployedNodeOptions('delivery'), /--max-semi-space-size=\d+/);
});
