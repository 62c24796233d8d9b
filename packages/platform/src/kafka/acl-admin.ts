// Creates the ACL table (acls.ts) on a cluster through the kafkajs admin client, as a super user.
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes, type AclEntry, type Admin } from '../kafkajs/index.js';
import { aclBindings, type AclOperation, type AclPatternType, type AclResourceType, type PrincipalAcls } from './acls.js';

const resourceTypes: Record<AclResourceType, AclEntry['resourceType']> = {
  Topic: AclResourceTypes.TOPIC, Group: AclResourceTypes.GROUP, TransactionalId: AclResourceTypes.TRANSACTIONAL_ID, Cluster: AclResourceTypes.CLUSTER,
};
const patternTypes: Record<AclPatternType, AclEntry['resourcePatternType']> = { Literal: ResourcePatternTypes.LITERAL, Prefixed: ResourcePatternTypes.PREFIXED };
const operations: Record<AclOperation, AclEntry['operation']> = {
  Read: AclOperationTypes.READ, Write: AclOperationTypes.WRITE, Create: AclOperationTypes.CREATE, Describe: AclOperationTypes.DESCRIBE,
  Alter: AclOperationTypes.ALTER, DescribeConfigs: AclOperationTypes.DESCRIBE_CONFIGS, AlterConfigs: AclOperationTypes.ALTER_CONFIGS,
};

/** The table's bindings as kafkajs entries: allow, from any host. */
export function aclEntries(table: readonly PrincipalAcls[]): AclEntry[] {
  return aclBindings(table).map((b) => ({
    resourceType: resourceTypes[b.resourceType],
    resourceName: b.name,
    resourcePatternType: patternTypes[b.patternType],
    principal: b.principal,
    host: '*',
    operation: operations[b.operation],
    permissionType: AclPermissionTypes.ALLOW,
  }));
}

/** Creates every binding of the table (creating one that exists changes nothing); returns how many. */
export async function createAcls(admin: Admin, table: readonly PrincipalAcls[]): Promise<number> {
  const acl = aclEntries(table);
  if (acl.length > 0) await admin.createAcls({ acl });
  return acl.length;
}
