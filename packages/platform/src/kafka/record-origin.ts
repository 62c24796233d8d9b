import type { IHeaders } from '../kafkajs/index.js';

/**
 * Which Switchyard service wrote a record to the ingest topic, as a Kafka record header. Ingest
 * (calls it checked and counted), control (deletion notifications) and audiences (identify calls)
 * set it on every ingest-topic record they write; a record without it came from some other Kafka
 * producer (a direct record), so fan-out applies the call rules to it and counts it in usage
 * (ARCHITECTURE.md, "Direct records"). A header rather than an Avro field: it says how the record
 * travelled, not what the call is, and a direct producer that encodes with the published schemas
 * cannot set it by accident.
 */
export const ORIGIN_HEADER = 'switchyard-origin';

export type RecordOrigin = 'ingest' | 'control' | 'audiences';

const ORIGINS: ReadonlySet<string> = new Set<RecordOrigin>(['ingest', 'control', 'audiences']);

/** The headers of a record written by `origin`: one shared, frozen object per origin. */
export const originHeaders: Readonly<Record<RecordOrigin, Readonly<Record<string, string>>>> = Object.freeze({
  ingest: Object.freeze({ [ORIGIN_HEADER]: 'ingest' }),
  control: Object.freeze({ [ORIGIN_HEADER]: 'control' }),
  audiences: Object.freeze({ [ORIGIN_HEADER]: 'audiences' }),
});

/**
 * True when a Switchyard service wrote the record (the header names a known origin); false for a
 * direct record. One property lookup and, for marked records, a short comparison: cheap enough for
 * every record fan-out reads.
 */
export function writtenBySwitchyard(headers: IHeaders | undefined): boolean {
  const value = headers?.[ORIGIN_HEADER];
  if (value === undefined) return false;
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return false;
  return ORIGINS.has(typeof first === 'string' ? first : first.toString('latin1'));
}
