import { mkdtempSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ImageCache } from '../../daemon/site/imageCache.ts';
import { watchImageSources } from '../../daemon/site/imageSourceWatcher.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startTestNats } from '../support/natsServer.ts';
import { moduleBundle } from './moduleSupport.ts';

describe("the site agent's cache learns module bundles", () => {
  it('registers the bundle a module.apply command names, so the host reads it from the verified cache', async () => {
    const stateDir = mkdtempSync('/var/tmp/bc-bundle-source-');
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'site');
    const cache = new ImageCache(stateDir);
    const watcher = watchImageSources(nc, 'dc1', cache, 'http://10.0.0.1:8080', createLogger('test', 'silent'));
    try {
      await nc.flush();
      const { params } = moduleBundle('1.0.0');
      const sha = 'c'.repeat(64);
      const command = {
        commandId: 'wf-s0-a1',
        kind: 'module.apply',
        siteId: 'dc1',
        nodeId: 'n1',
        workflowId: 'wf',
        stepIndex: 0,
        attempt: 1,
        destructive: false,
        params: { ...params, bundleUrl: 'https://modules.example/resolver-1.0.0.bundle.tar', bundleSha256: sha },
        issuedAt: new Date().toISOString(),
        notAfter: new Date(Date.now() + 60_000).toISOString(),
        nonce: 'b'.repeat(22),
      };
      nc.publish(Subjects.nodeAgentCommands('dc1', 'n1'), JSON.stringify(command));
      await expect.poll(() => cache.known(sha), { timeout: 5_000 }).toBe(true);
    } finally {
      watcher.unsubscribe();
      await nc.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
