import { callFieldsViolation, sizeViolation, timeViolation, type RuleViolation } from '@switchyard/platform/calls/call-rules';
import type { EventRecord } from '@switchyard/platform/tasks/webhook-body';

/**
 * The call rules for a direct record (produced straight to the ingest topic by a Kafka producer of
 * the customer's, not by ingest): the rules ingest applies to an HTTP call (shared in
 * `@switchyard/platform/calls/call-rules`), read from the decoded Avro record. Pure. What the schema
 * already guarantees (a known type, strings where strings belong, numeric times) needs no check;
 * what it cannot:
 * - size: at most 32 KB, measured on the record value as produced (its equivalent of "the call as
 *   sent"; Avro is more compact than the JSON of the same call, so this never refuses a call the
 *   HTTP API would take);
 * - ids and required fields: userId or anonymousId (empty strings are absent); track `event`,
 *   group `groupId`, alias `previousId` and `userId`; a delete's `userId`;
 * - times (timestamp, originalTimestamp, sentAt, receivedAt): within the years 1000–9999, the
 *   range ingest reads (`invalid_timestamp`);
 * - free-form fields (properties, traits, context, integrations): null, or JSON text of an object
 *   (`null` text counts as absent, like JSON null over HTTP); anything else would reach the
 *   webhook as `{}` or not at all, so the call is refused (`invalid_field`) rather than silently
 *   emptied. Parsing them costs a JSON.parse per field, paid only by direct records.
 */
export function directRecordViolation(event: EventRecord, bytes: number): RuleViolation | null {
  const tooLarge = sizeViolation(bytes);
  if (tooLarge) return tooLarge;
  const { userId, anonymousId } = event.value;
  const broken = callFieldsViolation({
    type: event.type, userId, anonymousId,
    event: event.type === 'track' ? event.value.event : null,
    groupId: event.type === 'group' ? event.value.groupId : null,
    previousId: event.type === 'alias' ? event.value.previousId : null,
  });
  if (broken) return broken;
  const { timestamp, originalTimestamp, sentAt, receivedAt } = event.value;
  const badTime = timeViolation('timestamp', timestamp) ?? timeViolation('receivedAt', receivedAt)
    ?? (originalTimestamp === null ? null : timeViolation('originalTimestamp', originalTimestamp))
    ?? (sentAt === null ? null : timeViolation('sentAt', sentAt));
  if (badTime) return badTime;
  for (const [field, text] of freeFormFields(event)) {
    if (text !== null && !isObjectText(text)) return { reason: 'invalid_field', message: `${field} must be the JSON text of an object` };
  }
  return null;
}

function freeFormFields(event: EventRecord): Array<[string, string | null]> {
  const { context, integrations } = event.value;
  switch (event.type) {
    case 'track': case 'page': case 'screen':
      return [['properties', event.value.properties], ['context', context], ['integrations', integrations]];
    case 'identify': case 'group':
      return [['traits', event.value.traits], ['context', context], ['integrations', integrations]];
    default:
      return [['context', context], ['integrations', integrations]];
  }
}

function isObjectText(text: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  return parsed === null || (typeof parsed === 'object' && !Array.isArray(parsed));
}
