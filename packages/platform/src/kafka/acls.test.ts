import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACL_ROLES, aclBindings, aclTable, isAllowed, kafkaAclsCommands, REGISTRY_KAFKA_NAMES, type AclOperation, type AclResourceType, type AclRole } from './acls.js';
import { followerGroupPrefix, groupIds, LIVE_TAIL_GROUP_PREFIX, partitionTransactionalId, replayTransactionalId, throwawayGroupPrefixes } from './groups.js';
import { topicDeclarations, topicNames } from './topics.js';

const prefix = 'acme.';
const table = aclTable({ prefix });
const t = topicNames(prefix);
const g = groupIds(prefix);
const allows = (role: AclRole, type: AclResourceType, name: string, op: AclOperation) =>
  isAllowed(table.find((p) => p.role === role)!.grants, type, name, op);

describe('aclTable', () => {
  it('has one principal per role, switchyard-<role>, each with grants', () => {
    assert.deepEqual(table.map((p) => p.principal), ACL_ROLES.map((r) => `User:switchyard-${r}`));
    for (const p of table) assert.ok(p.grants.length > 0, p.role);
  });

  // What each service does, from its code: every row must be allowed.
  const needed: Array<[AclRole, AclResourceType, string, AclOperation]> = [
    ['setup', 'Topic', t.ingest, 'Create'], ['setup', 'Topic', t.retry(3), 'Alter'], ['setup', 'Topic', t.config, 'AlterConfigs'],
    ['setup', 'Topic', t.usage, 'DescribeConfigs'], ['setup', 'Topic', t.fanoutPositions, 'Describe'],
    ['ingest', 'Topic', t.ingest, 'Write'], ['ingest', 'Topic', t.invalidEvents, 'Write'], ['ingest', 'Topic', t.usage, 'Write'], ['ingest', 'Topic', t.config, 'Read'],
    ['fanout', 'Topic', t.ingest, 'Read'], ['fanout', 'Topic', t.delivery, 'Write'], ['fanout', 'Topic', t.retry(1), 'Write'], ['fanout', 'Topic', t.fanoutPositions, 'Read'],
    ['fanout', 'Topic', t.fanoutPositions, 'Write'], ['fanout', 'Topic', t.delivery, 'Describe'], ['fanout', 'Topic', t.replays, 'Write'],
    ['fanout', 'Group', g.fanout, 'Read'], ['fanout', 'Group', g.fanout, 'Describe'], ['fanout', 'Group', g.fanoutReplays, 'Read'],
    ['fanout', 'Group', `${throwawayGroupPrefixes(prefix).replayReader}r1-0f3c`, 'Read'], ['fanout', 'Group', `${followerGroupPrefix('destination-state')}0f3c`, 'Read'],
    ['fanout', 'TransactionalId', partitionTransactionalId(prefix, 'fanout', 11), 'Write'], ['fanout', 'TransactionalId', replayTransactionalId(prefix, 'rpl_1'), 'Write'],
    ['delivery', 'Topic', t.delivery, 'Read'], ['delivery', 'Topic', t.retry(1), 'Read'], ['delivery', 'Topic', t.retry(7), 'Write'], ['delivery', 'Topic', t.ingest, 'Read'],
    ['delivery', 'Topic', t.deadLetter, 'Write'], ['delivery', 'Topic', t.destinationState, 'Write'], ['delivery', 'Topic', t.deliveryAttempts, 'Write'],
    ['delivery', 'Group', g.delivery, 'Read'], ['delivery', 'Group', g.deliveryRetries, 'Read'], ['delivery', 'Group', g.delivery, 'Describe'],
    ['audiences', 'Topic', t.ingest, 'Read'], ['audiences', 'Topic', t.ingest, 'Write'], ['audiences', 'Topic', t.audiencesState, 'Write'],
    ['audiences', 'Group', g.audiences, 'Read'], ['audiences', 'Group', `${throwawayGroupPrefixes(prefix).audiencesRestore}9a`, 'Read'],
    ['audiences', 'TransactionalId', partitionTransactionalId(prefix, 'audiences', 0), 'Write'],
    ['control', 'Topic', t.config, 'Write'], ['control', 'Topic', t.ingest, 'Write'], ['control', 'Topic', t.delivery, 'Write'], ['control', 'Topic', t.replays, 'Write'],
    ['control', 'Topic', t.deadLetter, 'Read'], ['control', 'Topic', t.deliveryAttempts, 'Read'], ['control', 'Topic', t.usage, 'Read'],
    ['control', 'Group', `${LIVE_TAIL_GROUP_PREFIX}0f3c`, 'Read'], ['control', 'Group', `${followerGroupPrefix('trace-index')}0f3c`, 'Read'],
    ['control', 'Topic', t.destinationState, 'Read'], ['control', 'Group', `${followerGroupPrefix('destination-state')}0f3c`, 'Read'],
    ['registry', 'Topic', 'kafkasql-journal', 'Create'], ['registry', 'Topic', 'kafkasql-journal', 'Write'], ['registry', 'Group', `${REGISTRY_KAFKA_NAMES.groupPrefix}5e1d`, 'Read'],
    ['producer', 'Topic', t.ingest, 'Write'],
  ];
  for (const [role, type, name, op] of needed) {
    it(`lets ${role} ${op} ${type} ${name}`, () => assert.ok(allows(role, type, name, op)));
  }

  // And what a service must not do: another stage's group, a topic it has no business with.
  const refused: Array<[AclRole, AclResourceType, string, AclOperation]> = [
    ['ingest', 'Topic', t.ingest, 'Read'], ['ingest', 'Topic', t.delivery, 'Write'], ['ingest', 'Group', g.fanout, 'Read'],
    ['fanout', 'Topic', t.retry(2), 'Write'], ['fanout', 'Topic', t.deadLetter, 'Write'], ['fanout', 'Group', g.delivery, 'Read'], ['fanout', 'Group', g.audiences, 'Read'],
    ['fanout', 'TransactionalId', partitionTransactionalId(prefix, 'audiences', 0), 'Write'],
    ['delivery', 'Topic', t.config, 'Write'], ['delivery', 'Topic', t.delivery, 'Write'], ['delivery', 'Topic', t.deliveryAttempts, 'Read'],
    ['delivery', 'TransactionalId', partitionTransactionalId(prefix, 'fanout', 0), 'Write'],
    ['audiences', 'Topic', t.delivery, 'Write'], ['audiences', 'Group', g.fanout, 'Read'],
    ['control', 'Topic', t.deadLetter, 'Write'], ['control', 'Group', g.fanout, 'Read'], ['control', 'Topic', t.destinationState, 'Write'],
    ['setup', 'Topic', t.ingest, 'Read'], ['setup', 'Topic', t.ingest, 'Write'], ['setup', 'Topic', 'other.ingest', 'Create'],
    ['registry', 'Topic', t.ingest, 'Read'], ['producer', 'Topic', t.ingest, 'Read'], ['producer', 'Topic', t.config, 'Write'],
  ];
  for (const [role, type, name, op] of refused) {
    it(`does not let ${role} ${op} ${type} ${name}`, () => assert.equal(allows(role, type, name, op), false));
  }

  it("delivery's prefixed grant covers the retry tiers and no other topic", () => {
    const prefixed = table.find((p) => p.role === 'delivery')!.grants.filter((gr) => gr.patternType === 'Prefixed' && gr.resourceType === 'Topic');
    assert.equal(prefixed.length, 1);
    assert.ok(isAllowed(prefixed, 'Topic', t.retry(12), 'Write'));
    for (const name of [t.delivery, t.deliveryAttempts, t.deadLetter]) assert.equal(isAllowed(prefixed, 'Topic', name, 'Read'), false, name);
  });

  it('gives every declared topic a writer, and every topic but invalid-events a reader', () => {
    for (const { name } of topicDeclarations({ prefix, partitions: 3, retryTiers: 3 })) {
      const services = ACL_ROLES.filter((r) => r !== 'setup' && r !== 'producer');
      assert.ok(services.some((r) => allows(r, 'Topic', name, 'Write')), `${name} has no writer`);
      if (name !== t.invalidEvents) assert.ok(services.some((r) => allows(r, 'Topic', name, 'Read')), `${name} has no reader`);
    }
  });

  it('names nothing outside the prefix but the registry and the throwaway groups that always start with switchyard.', () => {
    const outside = aclBindings(table).filter((b) => !b.name.startsWith(prefix)).map((b) => b.name);
    const allowed = [...REGISTRY_KAFKA_NAMES.topics, REGISTRY_KAFKA_NAMES.groupPrefix];
    for (const name of outside) assert.ok(allowed.includes(name) || name.startsWith('switchyard.'), name);
  });

  it('grants no cluster operation and no wildcard', () => {
    const bindings = aclBindings(table);
    assert.equal(bindings.some((b) => b.resourceType === 'Cluster'), false);
    assert.equal(bindings.some((b) => b.name === '*' || b.name === ''), false);
  });
});

describe('kafkaAclsCommands', () => {
  it('writes one kafka-acls.sh line per grant, prefixed patterns marked', () => {
    const lines = kafkaAclsCommands(table, { bootstrap: '127.0.0.1:9092', commandConfig: 'admin.properties' });
    assert.equal(lines.length, table.reduce((n, p) => n + p.grants.length, 0));
    assert.ok(lines.includes('kafka-acls.sh --bootstrap-server 127.0.0.1:9092 --command-config admin.properties --add --allow-principal User:switchyard-ingest --operation Write --topic acme.ingest'));
    assert.ok(lines.includes(`kafka-acls.sh --bootstrap-server 127.0.0.1:9092 --command-config admin.properties --add --allow-principal User:switchyard-fanout --operation Write --transactional-id acme.fanout-p --resource-pattern-type prefixed`));
  });

  it('quotes a name the shell would split', () => {
    const [line] = kafkaAclsCommands(aclTable({ prefix: "it's " }).filter((p) => p.role === 'producer'));
    assert.match(line!, /--topic 'it'\\''s ingest'$/);
  });
});
