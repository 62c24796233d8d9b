// Public API of @switchyard/cli: the command as a function, and the typed admin API client.
export { run, type RunIo } from './run.js';
export {
  AdminApiError,
  AdminClient,
  AdminConnectionError,
  type AdminClientOptions,
  type CreateDestinationInput,
  type CreateSourceInput,
  type Destination,
  type DestinationList,
  type Source,
  type SourceList,
  type UpdateDestinationInput,
  type UpdateSourceInput,
  type Webhook,
  type WebhookInput,
  type WriteKeyCreated,
} from './admin-client.js';
