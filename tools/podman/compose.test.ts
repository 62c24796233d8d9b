import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultServices, readCompose, startOrder, substitute } from './compose.js';

describe('compose orchestration', () => {
  it('substitutes ${NAME:-default} as compose does', () => {
    assert.equal(substitute('${SUBNET:-172.31.213.0/24}', {}), '172.31.213.0/24');
    assert.equal(substitute('${SUBNET:-172.31.213.0/24}', { SUBNET: '10.1.0.0/16' }), '10.1.0.0/16');
    assert.equal(substitute('${SUBNET}', {}), '');
  });

  it('starts every service after what it depends on', () => {
    const file = readCompose();
    const order = startOrder(file, defaultServices(file));
    for (const [i, name] of order.entries()) {
      const deps = file.services[name]!.depends_on ?? {};
      for (const dep of Array.isArray(deps) ? deps : Object.keys(deps)) assert.ok(order.indexOf(dep) < i, `${dep} before ${name}`);
    }
    assert.equal(order[0], 'kafka');
  });

  it('starts every service without a profile but Grafana, which has no image built here', () => {
    const services = defaultServices(readCompose());
    assert.ok(!services.includes('grafana'));
    assert.ok(!services.includes('traffic'));
    for (const s of ['kafka', 'registry', 'setup', 'control', 'ingest', 'fanout', 'delivery', 'audiences', 'receiver', 'prometheus']) assert.ok(services.includes(s), s);
  });

  it('refuses a depends_on cycle, naming it', () => {
    const file = { services: { a: { depends_on: ['b'] }, b: { depends_on: ['a'] } } };
    assert.throws(() => startOrder(file, ['a']), /cycle: a -> b -> a/);
  });
});
