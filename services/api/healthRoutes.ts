import type { FastifyPluginAsync } from 'fastify';
import { watchConnectionState } from '../platform/nats/connectionState.ts';
import type { ApiContext } from './apiContext.ts';
import { readinessWarnings } from './readinessWarnings.ts';

/** Stream position, fetched at most once per interval: readiness and metrics poll it often. */
function cachedStreamLastSeq(ctx: ApiContext, ttlMs = 500) {
  let at = 0;
  let value = 0;
  return async () => {
    if (Date.now() - at > ttlMs) {
      value = await ctx.store.streamLastSequence();
      at = Date.now();
    }
    return value;
  };
}

/**
 * `/healthz` (process alive), `/readyz` (NATS up, read models within the lag bound; `warnings` names each insecure
 * mode the stack runs in, without making it unready), `/metrics` (Prometheus).
 */
export const healthRoutes: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const streamLastSeq = cachedStreamLastSeq(ctx);
  const warnings = readinessWarnings(ctx.config);
  const connection = watchConnectionState(ctx.nc);

  const projectorPositions = async () => {
    const last = await streamLastSeq();
    const positions = [...ctx.readers.values()].map((reader) => {
      let checkpoint: number | null = null;
      try {
        checkpoint = reader.checkpoint();
      } catch {
        // not built yet: reported as unready below
      }
      return { projection: reader.name, checkpoint, lag: checkpoint === null ? null : Math.max(0, last - checkpoint) };
    });
    return { last, positions };
  };

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const natsConnected = connection.connected();
    const { last, positions } = natsConnected ? await projectorPositions().catch(() => ({ last: -1, positions: [] })) : { last: -1, positions: [] };
    const caughtUp = positions.length === ctx.readers.size && positions.every((p) => p.lag !== null && p.lag <= ctx.config.readyMaxLag);
    const ready = natsConnected && last >= 0 && caughtUp;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not-ready', nats: natsConnected, streamLastSeq: last, projections: positions, warnings });
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const { last, positions } = await projectorPositions().catch(() => ({ last: 0, positions: [] }));
    ctx.metrics.streamLastSeq.set(last);
    for (const p of positions) {
      if (p.checkpoint !== null) ctx.metrics.projectorCheckpoint.set({ projection: p.projection }, p.checkpoint);
      if (p.lag !== null) ctx.metrics.projectorLag.set({ projection: p.projection }, p.lag);
    }
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
};
