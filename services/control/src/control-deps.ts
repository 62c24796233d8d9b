import type { ConfigView } from '@switchyard/platform/config-view/config-view';
import type { destinationSchemas } from './api-schemas.js';
import type { ConfigStore } from './config-store.js';

/** What the admin routes need, passed in (tests give a fake clock). */
export interface ControlDeps {
  view: ConfigView;
  store: ConfigStore;
  clock: () => number;
  destinationSchemas: ReturnType<typeof destinationSchemas>;
}
