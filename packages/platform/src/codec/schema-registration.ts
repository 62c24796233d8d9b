import { SchemaType, type SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { withRetries } from '../retry.js';

/** A PUT to the registry API with the connection's credentials and CA (registry-connection.ts). */
export type RegistryPut = (path: string, body: unknown) => Promise<{ status: number; text: string }>;

/** The compatibility every Switchyard subject has: add fields with defaults, never break readers. */
export const SUBJECT_COMPATIBILITY = 'BACKWARD';

const NO_RULE_YET = /Compatibility does not match the configuration \(BACKWARD != NONE\)/;
const RULE_EXISTS = /already exists/i;

/**
 * Registers an Avro schema under a subject (idempotent: the same schema gets the same id) and makes
 * sure the subject is BACKWARD. The client library does that in two steps — register, then set the
 * subject's rule if the subject was new — so processes registering a new subject at once race:
 * one sees the subject after the other's first step and before its second, with no rule (NONE),
 * and fails "BACKWARD != NONE"; or both set the rule and one fails "rule already exists". Measured
 * on Apicurio: 30 of 180 staggered concurrent registrations failed the first way, 106 the second.
 * Both are settled here: a subject without its rule gets it (from us, if its registrant died between
 * the steps), and a rule that already exists is what we wanted; then registering again succeeds.
 */
export function registerSubject(registry: SchemaRegistry, put: RegistryPut, subject: string, schema: string): Promise<{ id: number }> {
  return withRetries(async () => {
    try {
      return await registry.register({ type: SchemaType.AVRO, schema }, { subject });
    } catch (err) {
      if (NO_RULE_YET.test((err as Error).message)) await setCompatibility(put, subject);
      throw err;
    }
  }, { attempts: 6, delayMs: 50, retriable: (err) => RULE_EXISTS.test((err as Error).message) || NO_RULE_YET.test((err as Error).message) });
}

async function setCompatibility(put: RegistryPut, subject: string): Promise<void> {
  const res = await put(`/config/${encodeURIComponent(subject)}`, { compatibility: SUBJECT_COMPATIBILITY });
  // A conflict means another process set the rule first: the subject is as wanted.
  if ((res.status < 200 || res.status >= 300) && !RULE_EXISTS.test(res.text)) throw new Error(`setting ${subject} to ${SUBJECT_COMPATIBILITY} failed: ${res.status} ${res.text.slice(0, 200)}`);
}
