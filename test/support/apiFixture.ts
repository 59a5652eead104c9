import { buildApi } from '../../services/api/server.ts';
import { createMetrics } from '../../services/api/metrics.ts';
import { startBackbone } from './backboneFixture.ts';

/** A backbone plus the HTTP API on it, for `app.inject()` tests. */
export async function startApi() {
  const backbone = await startBackbone();
  const app = await buildApi(
    { config: backbone.config, nc: backbone.nc, store: backbone.store, bus: backbone.bus, readers: backbone.readers, metrics: createMetrics() },
    backbone.log,
  );
  const disposeBackbone = backbone[Symbol.asyncDispose].bind(backbone);
  return Object.assign(backbone, {
    app,
    async [Symbol.asyncDispose]() {
      await app.close();
      await disposeBackbone();
    },
  });
}
