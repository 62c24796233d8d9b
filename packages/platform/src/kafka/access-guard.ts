/**
 * Names what a failed Kafka operation touched, so a missing ACL is reported as the resource, name
 * and operation to grant (failure-watch.ts) rather than as kafkajs's "Not authorized to access
 * topics". Wraps the methods of the clients createKafka, createProducer and createConsumer return:
 * each failure goes to the watch with the operation's resources, then is thrown on unchanged.
 */
import type { Access } from '../connection-failures.js';
import type { Admin, Consumer, Producer } from '../kafkajs/index.js';
import type { FailureWatch } from './failure-watch.js';

type AnyMethod = (...args: never[]) => unknown;

/** Replaces `target[name]` by a version that reports a rejection, with `access(args)`, to the watch. */
function guard<T extends object>(watch: FailureWatch, target: T, name: keyof T & string, access: (args: unknown[]) => Access): void {
  const original = target[name] as unknown as AnyMethod | undefined;
  if (typeof original !== 'function') return;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    const result = (original as (...a: unknown[]) => unknown).apply(target, args);
    if (!(result instanceof Promise)) return result;
    return result.catch((err: unknown) => {
      watch.kafkaError(err, access(args));
      throw err;
    });
  };
  (target as Record<string, unknown>)[name] = wrapped;
}

const topicsOf = (records: unknown): string[] => {
  const list = Array.isArray(records) ? records : [records];
  return [...new Set(list.map((r) => (r as { topic?: unknown }).topic).filter((t): t is string => typeof t === 'string'))];
};
const field = (args: unknown[], key: string): unknown => (args[0] && typeof args[0] === 'object' ? (args[0] as Record<string, unknown>)[key] : undefined);

/** The producer's identity: its transactional id, or the cluster's IdempotentWrite (or Write on a topic). */
function producerAccess(transactionalId: string | undefined): Access {
  return transactionalId ? { TransactionalId: { operation: 'Write', names: [transactionalId] } } : { Cluster: { operation: 'IdempotentWrite', names: [] } };
}

export function guardProducer(watch: FailureWatch, producer: Producer, transactionalId: string | undefined): Producer {
  const self = producerAccess(transactionalId);
  const writes = (topics: string[]): Access => ({ ...self, Topic: { operation: 'Write', names: topics } });
  guard(watch, producer, 'connect', () => self);
  guard(watch, producer, 'send', (args) => writes(topicsOf(args[0])));
  guard(watch, producer, 'sendBatch', (args) => writes(topicsOf(field(args, 'topicMessages'))));
  const transaction = producer.transaction.bind(producer);
  producer.transaction = async () => {
    let txn;
    try { txn = await transaction(); } catch (err) { watch.kafkaError(err, self); throw err; }
    guard(watch, txn, 'send', (args) => writes(topicsOf(args[0])));
    guard(watch, txn, 'sendBatch', (args) => writes(topicsOf(field(args, 'topicMessages'))));
    guard(watch, txn, 'sendOffsets', (args) => ({
      ...self,
      Group: { operation: 'Read', names: [String(field(args, 'consumerGroupId'))] },
      Topic: { operation: 'Read', names: topicsOf(field(args, 'topics')) },
    }));
    guard(watch, txn, 'commit', () => self);
    guard(watch, txn, 'abort', () => self);
    return txn;
  };
  return producer;
}

/** A consumer's group and the topics it subscribed to; its crashes are reported by createConsumer. */
export function consumerAccess(groupId: string, topics: readonly string[]): Access {
  return { Group: { operation: 'Read', names: [groupId] }, Topic: { operation: 'Read', names: topics } };
}

const subscriptions = new WeakMap<Consumer, string[]>();

/** The topics a guarded consumer subscribed to. */
export function subscribedTopics(consumer: Consumer): readonly string[] {
  return subscriptions.get(consumer) ?? [];
}

export function guardConsumer(watch: FailureWatch, consumer: Consumer, groupId: string): Consumer {
  const subscribed: string[] = [];
  subscriptions.set(consumer, subscribed);
  const subscribe = consumer.subscribe.bind(consumer);
  consumer.subscribe = async (subscription) => {
    const topics = 'topics' in subscription ? subscription.topics : [subscription.topic];
    for (const t of topics) if (typeof t === 'string' && !subscribed.includes(t)) subscribed.push(t);
    try { return await subscribe(subscription); } catch (err) { watch.kafkaError(err, consumerAccess(groupId, subscribed)); throw err; }
  };
  guard(watch, consumer, 'connect', () => consumerAccess(groupId, subscribed));
  guard(watch, consumer, 'run', () => consumerAccess(groupId, subscribed));
  guard(watch, consumer, 'commitOffsets', () => consumerAccess(groupId, subscribed));
  return consumer;
}

/** Admin operations and the ACL each needs on its resources. */
export function guardAdmin(watch: FailureWatch, admin: Admin): Admin {
  const topicArg = (operation: string, key: string, inner?: string) => (args: unknown[]): Access => {
    const value = field(args, key);
    const list = Array.isArray(value) ? value : [];
    const names = list.map((v) => (typeof v === 'string' ? v : inner ? (v as Record<string, unknown>)[inner] : undefined)).filter((n): n is string => typeof n === 'string');
    return { Topic: { operation, names }, Cluster: { operation, names: [] } };
  };
  guard(watch, admin, 'createTopics', topicArg('Create', 'topics', 'topic'));
  guard(watch, admin, 'createPartitions', topicArg('Alter', 'topicPartitions', 'topic'));
  guard(watch, admin, 'describeConfigs', topicArg('DescribeConfigs', 'resources', 'name'));
  guard(watch, admin, 'alterConfigs', topicArg('AlterConfigs', 'resources', 'name'));
  guard(watch, admin, 'fetchTopicMetadata', topicArg('Describe', 'topics'));
  guard(watch, admin, 'fetchTopicOffsets', (args) => ({ Topic: { operation: 'Describe', names: typeof args[0] === 'string' ? [args[0]] : [] } }));
  guard(watch, admin, 'fetchTopicOffsetsByTimestamp', (args) => ({ Topic: { operation: 'Describe', names: typeof args[0] === 'string' ? [args[0]] : [] } }));
  guard(watch, admin, 'fetchOffsets', (args) => ({ Group: { operation: 'Describe', names: [String(field(args, 'groupId'))] }, Topic: { operation: 'Describe', names: (field(args, 'topics') as string[] | undefined) ?? [] } }));
  guard(watch, admin, 'listTopics', () => ({ Cluster: { operation: 'Describe', names: [] } }));
  guard(watch, admin, 'connect', () => ({}));
  return admin;
}
