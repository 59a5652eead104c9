import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startNatsCluster, type NatsCluster } from '../../services/stack/natsCluster.ts';
import type { BrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { tempDir } from './natsServer.ts';

/** A 3-node JetStream cluster of the test's own on loopback (anonymous unless `broker` is given), removed on dispose. */
export async function startTestCluster(options: { broker?: BrokerMaterial; size?: number } = {}): Promise<NatsCluster & AsyncDisposable> {
  const dir = tempDir('bc-cluster-');
  const cluster = await startNatsCluster({ dir: join(dir.path, 'cluster'), ...options }).catch((err: unknown) => {
    dir[Symbol.dispose]();
    throw err;
  });
  return Object.assign(cluster, {
    async [Symbol.asyncDispose]() {
      await cluster.stop();
      rmSync(dir.path, { recursive: true, force: true });
    },
  });
}
