import type { InjectOptions } from 'fastify';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { buildApi } from '../../services/api/server.ts';
import { createMetrics } from '../../services/api/metrics.ts';
import type { Config } from '../../services/platform/config.ts';
import { startBackbone } from './backboneFixture.ts';

/**
 * A backbone plus the HTTP API on it, for `app.inject()` tests. The API bootstraps its admin token into the data
 * dir; `app.inject` sends it unless the test sets its own `authorization` header (`authorization: ''` sends none).
 */
export async function startApi(options: { config?: Partial<Config> } = {}) {
  const backbone = await startBackbone({ config: options.config });
  const config = { ...backbone.config, ...options.config };
  const app = await buildApi(
    { config, nc: backbone.nc, store: backbone.store, bus: backbone.bus, readers: backbone.readers, metrics: createMetrics() },
    backbone.log,
  );
  const adminToken = readAdminToken(backbone.dataDir) ?? '';
  const inject = app.inject.bind(app);
  app.inject = ((opts: InjectOptions) => {
    const headers = { ...(adminToken ? { authorization: `Bearer ${adminToken}` } : {}), ...(opts.headers ?? {}) } as Record<string, string>;
    if (headers.authorization === '') delete headers.authorization;
    return inject({ ...opts, headers });
  }) as typeof app.inject;
  const disposeBackbone = backbone[Symbol.asyncDispose].bind(backbone);
  return Object.assign(backbone, {
    app,
    /** The bootstrap admin token (empty with `apiAuth: 'off'`). */
    adminToken,
    [Symbol.asyncDispose]: async () => {
      await app.close();
      await disposeBackbone();
    },
  });
}
