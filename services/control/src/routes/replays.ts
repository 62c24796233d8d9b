import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Replay } from '@switchyard/platform/schemas/generated';
import { apiError } from '../admin-errors.js';
import { destinationFilter, parseBody } from '../api-schemas.js';
import { counted } from '../admin-metrics.js';
import type { ControlDeps } from '../control-deps.js';
import { newReplayId } from '../ids.js';
import { replayView } from '../replay-index.js';
import { accessOf } from '../scopes.js';
import { storedFilter } from '../views.js';
import { isNotificationEndpoint } from '../notification-endpoints.js';

/** At most this many records per second, whatever fan-out would allow (its FANOUT_REPLAY_MAX_RATE caps it again). */
export const MAX_REPLAY_RATE = 100_000;
export const DEFAULT_REPLAY_RATE = 500;

export const replayRequest = z.strictObject({
  from: z.iso.datetime({ offset: true, error: 'from must be an ISO 8601 date-time, e.g. 2026-11-22T10:00:00Z' }),
  to: z.iso.datetime({ offset: true, error: 'to must be an ISO 8601 date-time, e.g. 2026-11-22T11:00:00Z' }),
  filter: destinationFilter.optional(),
  rate: z.number().int().min(1).max(MAX_REPLAY_RATE).optional().meta({ description: `Ingest records read per second at most (default ${DEFAULT_REPLAY_RATE}; fan-out caps it at FANOUT_REPLAY_MAX_RATE)` }),
});

type Params = { Params: { id: string; rid: string } };

/**
 * Replays of a time range of the ingest topic into one destination (docs/delivery.md, "Replays of a time range"). Control
 * writes the request to the replays topic; the fan-out instance that owns that topic runs it and
 * writes its progress there, in the transactions of the tasks.
 */
export function replayRoutes(app: FastifyInstance, { view, clock, replays }: ControlDeps): void {
  const destination = (id: string) => { const d = view.state.destination(id); if (!d || isNotificationEndpoint(d)) throw apiError('DESTINATION_NOT_FOUND', { id }); return d; };
  const find = (destinationId: string, rid: string) => {
    const found = replays.get(rid);
    if (!found || found.replay.destinationId !== destinationId) throw apiError('REPLAY_NOT_FOUND', { id: rid, destinationId });
    return found;
  };

  app.post<Params>('/v1/destinations/:id/replays', counted.write('replay', 'create'), async (req, reply) => {
    const d = destination(req.params.id);
    const body = parseBody(replayRequest, req.body);
    const from = Date.parse(body.from);
    const to = Date.parse(body.to);
    if (!(from < to)) throw apiError('INVALID_RANGE', { field: 'to' });
    if (!d.enabled) throw apiError('DESTINATION_DISABLED', { id: d.id, field: 'id' });
    const replay: Replay = { id: newReplayId(), destinationId: d.id, sourceId: d.sourceId, from, to, filter: storedFilter(body.filter), rate: body.rate ?? DEFAULT_REPLAY_RATE, createdAt: clock(), cancelRequestedAt: null };
    await replays.write(replay);
    return reply.code(202).send(replayView(replay, undefined));
  });

  app.get<Params>('/v1/destinations/:id/replays', async (req) => {
    accessOf(req).requireSource(destination(req.params.id).sourceId);
    return { replays: replays.ofDestination(req.params.id).map(({ replay, progress }) => replayView(replay, progress)) };
  });

  app.get<Params>('/v1/destinations/:id/replays/:rid', async (req) => {
    const { replay, progress } = find(req.params.id, req.params.rid);
    accessOf(req).requireSource(replay.sourceId);
    return replayView(replay, progress);
  });

  app.delete<Params>('/v1/destinations/:id/replays/:rid', counted.write('replay', 'delete'), async (req, reply) => {
    const { replay, progress } = find(req.params.id, req.params.rid);
    const view = replayView(replay, progress);
    if (view.state !== 'running') throw apiError('REPLAY_FINISHED', { id: replay.id, state: view.state });
    const cancelled: Replay = replay.cancelRequestedAt === null ? { ...replay, cancelRequestedAt: clock() } : replay;
    if (cancelled !== replay) await replays.write(cancelled);
    return reply.code(202).send(replayView(cancelled, progress));
  });
}
