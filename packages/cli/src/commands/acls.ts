// switchyard acls: the Kafka ACLs each Switchyard program needs on a secured cluster, for a topic
// prefix (packages/platform/src/kafka/acls.ts). Needs no admin API: the table follows from the code.
import { Option } from 'commander';
import { aclTable, kafkaAclsCommands, REGISTRY_KAFKA_NAMES, type PrincipalAcls } from '@switchyard/platform/kafka/acls';
import { table } from '../format.js';
import type { LeafSpec } from './spec.js';

interface AclsOptions {
  prefix?: string;
  kafkaAcls?: boolean;
  bootstrapServer?: string;
  commandConfig?: string;
  registryTopics?: string;
}

/** The table as rows: one per grant, the principal's name on its first row only. */
export function aclRows(principals: readonly PrincipalAcls[]): string {
  return table(
    ['PRINCIPAL', 'RESOURCE', 'PATTERN', 'NAME', 'OPERATIONS', 'FOR'],
    principals.flatMap((p) => p.grants.map((g, i) => [i === 0 ? p.principal : '', g.resourceType, g.patternType, g.name, g.operations.join(','), g.why])),
  );
}

export const acls: LeafSpec = {
  usage: 'acls',
  summary: "print the Kafka ACLs of each Switchyard program's principal for a topic prefix (no API call)",
  help: [
    '',
    'Each program connects as its own principal, User:switchyard-<program>, and needs exactly these',
    'grants on a cluster whose authorizer refuses what no ACL allows. --kafka-acls prints them as',
    'kafka-acls.sh command lines; an admin client properties file goes in --command-config.',
    'Example: switchyard acls --prefix switchyard. --kafka-acls --bootstrap-server kafka:9093 --command-config admin.properties',
    '',
  ].join('\n'),
  options: () => [
    new Option('--prefix <prefix>', 'the topic prefix (default: $SWITCHYARD_TOPIC_PREFIX, else switchyard.)'),
    new Option('--kafka-acls', 'print kafka-acls.sh command lines instead of the table'),
    new Option('--bootstrap-server <address>', 'for --kafka-acls (default: "$KAFKA_BROKERS")'),
    new Option('--command-config <file>', 'for --kafka-acls: an admin client properties file (default: "$KAFKA_ADMIN_CONFIG")'),
    new Option('--registry-topics <names>', `the schema registry's topics, comma-separated (default: ${REGISTRY_KAFKA_NAMES.topics.join(',')})`),
  ],
  async run(ctx, _args, opts: AclsOptions) {
    const prefix = opts.prefix ?? ctx.env('SWITCHYARD_TOPIC_PREFIX') ?? 'switchyard.';
    if (prefix === '') return ctx.usage('--prefix must not be empty: every topic and group would match');
    const topics = opts.registryTopics?.split(',').map((s) => s.trim()).filter(Boolean);
    const principals = aclTable({ prefix, ...(topics?.length ? { registry: { ...REGISTRY_KAFKA_NAMES, topics } } : {}) });
    const text = opts.kafkaAcls
      ? `${kafkaAclsCommands(principals, { ...(opts.bootstrapServer ? { bootstrap: opts.bootstrapServer } : {}), ...(opts.commandConfig ? { commandConfig: opts.commandConfig } : {}) }).join('\n')}\n`
      : aclRows(principals);
    return { json: { prefix, principals }, text };
  },
};
