import { setTimeout as sleep } from 'node:timers/promises';
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
 * How long `/readyz` waits for any one NATS read. A read issued just before the server went away is held by the
 * client until it reconnects; without a bound the probe would hang through the outage and then report it healthy.
 */
const READINESS_READ_BOUND_MS = 2_000;

/** `read`'s value, or `fallback` when it fails or takes longer than the readiness bound. */
function bounded<T>(read: Promise<T>, fallback: T): Promise<T> {
  return Promise.race([read.catch(() => fallback), sleep(READINESS_READ_BOUND_MS, fallback, { ref: false })]);
}

/**
 * The log's last sequence when this process started, read once (again and again until NATS answers). Readiness is
 * measured against it: read models that sit behind what the log held at start are still catching up, however small
 * the lag bound, which would otherwise call a fresh process on a short log "ready" with every read model at 0.
 */
function startMark(read: () => Promise<number>): (() => number | undefined) & { stop(): void } {
  let mark: number | undefined;
  let stopped = false;
  void (async () => {
    for (let delayMs = 250; mark === undefined && !stopped; delayMs = Math.min(delayMs * 2, 5_000)) {
      mark = await bounded(read(), undefined);
      if (mark === undefined) await sleep(delayMs, undefined, { ref: false });
    }
  })();
  return Object.assign(() => mark, {
    stop: () => {
      stopped = true;
    },
  });
}

/**
 * `/healthz` (process alive), `/readyz` (NATS up; every read model caught up with the log as it was when this
 * process started, its checkpoint at least `startSeq`, and since then within the lag bound; `warnings` names each insecure
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
  const startSeq = startMark(() => ctx.store.streamLastSequence());
  app.addHook('onClose', async () => startSeq.stop());

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
    const upSince = connection.upSinceMs();
    const connectedAtStart = connection.connected();
    const unread = { last: -1, positions: [] as Awaited<ReturnType<typeof projectorPositions>>['positions'] };
    const [{ last, positions }, dead, leaders] = connectedAtStart
      ? await Promise.all([
          bounded(projectorPositions(), unread),
          bounded(deadLetterCounts(), undefined),
          // Who leads what: informative only (a standby stack with no leader yet is still ready to serve reads).
          bounded(leaderList(), null),
        ])
      : [unread, undefined, null];
    // Up for the whole probe: a connection that dropped while the reads were in flight answered nothing it can vouch for.
    const natsConnected = connectedAtStart && connection.connected() && connection.upSinceMs() === upSince;
    const mark = startSeq();
    const caughtUp =
      mark !== undefined &&
      positions.length === ctx.readers.size &&
      positions.every((p) => p.checkpoint !== null && p.checkpoint >= mark && p.lag !== null && p.lag <= ctx.config.readyMaxLag);
    const ready = natsConnected && last >= 0 && caughtUp;
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not-ready',
      nats: natsConnected,
      streamLastSeq: last,
      // null: the log's position at start is not known yet (NATS has not answered since the process started).
      startSeq: mark ?? null,
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
