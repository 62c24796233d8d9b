import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DeliveryTask } from '@switchyard/platform/schemas/generated';
import { apiError } from '../admin-errors.js';
import { parseBody } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import type { IndexedDeadLetter } from '../dead-letter-index.js';
import { deadLetterMetadata } from '../redaction.js';
import { accessOf } from '../scopes.js';

export const deadLetterQuery = z.strictObject({
  destinationId: z.string().min(1).optional(),
  reason: z.string().min(1).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export const replayRequest = z.strictObject({ ids: z.array(z.string().min(1)).min(1, 'name at least one dead letter').max(10_000) });

function view({ id, letter, replayedAt }: IndexedDeadLetter) {
  return {
    id, reason: letter.reason, status: letter.status, responseExcerpt: letter.responseExcerpt, error: letter.error,
    failedAt: new Date(letter.failedAt).toISOString(), destinationId: letter.task.destinationId, sourceId: letter.task.sourceId,
    messageId: letter.task.messageId, eventType: letter.task.eventType, attempts: letter.task.attempt,
    replayedAt: replayedAt === null ? null : new Date(replayedAt).toISOString(),
  };
}

/** Dead letters: list and inspect them, and replay chosen ones as fresh delivery tasks. */
export function deadLetterRoutes(app: FastifyInstance, { view: config, deadLetters, events, clock, metrics }: ControlDeps): void {
  app.get('/v1/dead-letters', async (req) => {
    const q = parseBody(deadLetterQuery, req.query);
    const access = accessOf(req);
    const named = q.destinationId === undefined ? undefined : config.state.destination(q.destinationId);
    if (named) access.requireSource(named.sourceId);
    const { items, total } = deadLetters.query({
      destinationId: q.destinationId, reason: q.reason, since: q.since ? Date.parse(q.since) : undefined, limit: q.limit,
      ...(access.principal.sourceIds === null ? {} : { sourceAllowed: (sourceId: string) => access.allowsSource(sourceId) }),
    });
    return { deadLetters: items.map((e) => (access.payloads ? view(e) : deadLetterMetadata(view(e)))), total };
  });

  app.get<{ Params: { id: string } }>('/v1/dead-letters/:id', async (req) => {
    const entry = deadLetters.get(req.params.id);
    if (!entry) throw apiError('DEAD_LETTER_NOT_FOUND', { id: req.params.id });
    const access = accessOf(req);
    access.requireSource(entry.letter.task.sourceId);
    const detail = { ...view(entry), body: entry.letter.task.body as string | null };
    return access.payloads ? detail : deadLetterMetadata(detail);
  });

  app.post('/v1/dead-letters/replay', counted.replay, async (req, reply) => {
    const { ids } = parseBody(replayRequest, req.body);
    const now = clock();
    const found = [...new Set(ids)].map((id) => deadLetters.get(id)).filter((e): e is IndexedDeadLetter => e !== undefined);
    // A fresh task: new attempts, new deadline, every URL of the destination as it is configured now.
    const tasks: DeliveryTask[] = found.map(({ letter }) => ({
      ...letter.task, createdAt: now, attempt: 0, firstAttemptAt: null, deadline: null, notBefore: null, pendingUrls: null, lastStatus: null, lastError: null,
    }));
    await events.writeTasks(tasks);
    for (const { id } of found) deadLetters.markReplayed(id, now);
    const replayed = new Set(found.map((e) => e.id));
    const notFound = ids.filter((id) => !replayed.has(id));
    metrics.replayLetters.inc({ result: 'replayed' }, replayed.size);
    metrics.replayLetters.inc({ result: 'not_found' }, notFound.length);
    return reply.code(202).send({ replayed: [...replayed], notFound });
  });
}
