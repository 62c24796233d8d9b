import type { ConfigView } from '@switchyard/platform/config-view/config-view';
import type { destinationSchemas } from './api-schemas.js';
import type { ConfigStore } from './config-store.js';
import type { Delete } from '@switchyard/platform/schemas/generated';

/** Writes events into the pipeline's ingest topic (deletion notifications). */
export interface EventWriter {
  writeDeletes(events: Delete[]): Promise<void>;
}

/** What the admin routes need, passed in (tests give a fake clock). */
export interface ControlDeps {
  view: ConfigView;
  store: ConfigStore;
  clock: () => number;
  destinationSchemas: ReturnType<typeof destinationSchemas>;
  events: EventWriter;
}
