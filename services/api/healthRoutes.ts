import type { FastifyPluginAsync } from 'fastify';
import { watchConnectionState } from '../platform/nats/connectionState.ts';
import type { DeadLetterReader } from '../platform/deadLetters/deadLetterReader.ts';
import type { LeaseReader } from '../platform/lease/leaseReader.ts';
import type { ApiContext } from './apiContext.ts';
import { readinessWarnings } from './readinessWarnings.ts';

/** A value fetched at most once per interval: readiness and metrics poll often. */
function cached<T>(fetch: () => Promise<T>, initial: T, ttlMs: number) {
  let at = 0;
  let value = initial;
  return async () => {
    if (Date.now() - at > ttlMs) {
      value = await fetch();
      at = Date.now();
    }
    return value;
  };
}

/**
 * `/healthz` (process alive), `/readyz` (NATS up, read models within the lag bound; `warnings` names each insecure
 * mode the stack runs in, and dead letters are reported, neither making it unready: a forged message cannot take the
 * API out of service), `/metrics` (Prometheus).
 */
export const healthRoutes: FastifyPluginAsync<{ ctx: ApiContext; deadLetters: DeadLetterReader; leases: LeaseReader }> = async (
  app,
  { ctx, deadLetters, leases },
) => {
  const streamLastSeq = cached(() => ctx.store.streamLastSequence(), 0, 500);
  const deadLetterCounts = cached(() => deadLetters.counts(), { total: 0, byConsumer: {} }, 5_000);
  const warnings = readinessWarnings(ctx.config);
  const leaderList = cached(() => leases.leaders(), [], 1_000);
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
    const dead = natsConnected ? await deadLetterCounts().catch(() => undefined) : undefined;
    // Who leads what: informative only (a standby stack with no leader yet is still ready to serve reads).
    const leaders = natsConnected ? await leaderList().catch(() => null) : null;
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not-ready',
      nats: natsConnected,
      streamLastSeq: last,
      projections: positions,
      warnings,
      // null: the dead letter stream could not be read.
      deadLetters: dead?.total ?? null,
      deadLettersByConsumer: dead?.byConsumer ?? {},
      leaders,
    });
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const { last, positions } = await projectorPositions().catch(() => ({ last: 0, positions: [] }));
    ctx.metrics.streamLastSeq.set(last);
    const dead = await deadLetterCounts().catch(() => undefined);
    if (dead) {
      ctx.metrics.deadLetters.reset();
      for (const [consumer, n] of Object.entries(dead.byConsumer)) ctx.metrics.deadLetters.set({ consumer }, n);
    }
    for (const p of positions) {
      if (p.checkpoint !== null) ctx.metrics.projectorCheckpoint.set({ projection: p.projection }, p.checkpoint);
      if (p.lag !== null) ctx.metrics.projectorLag.set({ projection: p.projection }, p.lag);
    }
    return reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
};
