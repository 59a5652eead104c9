import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { moduleHost, type ModuleApplyParams } from '../../../daemon/node/modules/moduleHost.ts';
import { startNodeAgent, type NodeAgent } from '../../../daemon/node/nodeAgent.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { hostName } from './hostNames.ts';

/**
 * The hosts of the rollout bench as a process of their own (so their CPU is not the control plane's): N real `bcd node`
 * agents, each on its own state directory (its key, journal and module tree: bundles unpacked, probes run as child
 * processes), `perConnection` of them sharing a NATS connection. Each starts on the first version, applied as an earlier
 * rollout would have left it. argv: natsUrl siteId count stateRoot seedFile heartbeatMs perConnection.
 * Prints `HOSTS-READY` once every agent registered.
 */
const [natsUrl, siteId, count, stateRoot, seedFile, heartbeatMs, perConnection] = process.argv.slice(2);
if (!natsUrl || !siteId || !count || !stateRoot || !seedFile || !heartbeatMs || !perConnection) {
  console.error('usage: hostsProcess <natsUrl> <siteId> <count> <stateRoot> <seedFile> <heartbeatMs> <perConnection>');
  process.exit(2);
}
const root: string = stateRoot;
const site: string = siteId;
const seed = JSON.parse(readFileSync(seedFile, 'utf8')) as { bundle: string; params: ModuleApplyParams };
const bundle = new Uint8Array(Buffer.from(seed.bundle, 'base64'));
const log = createLogger('bench-hosts', 'silent');
const connections: NatsConnection[] = [];
const agents: NodeAgent[] = [];
const bootId = () => 'boot-bench';

async function startHost(i: number): Promise<NodeAgent> {
  const nodeId = hostName(i);
  const stateDir = join(root, nodeId);
  await moduleHost({ stateDir, bootId }).apply(seed.params, bundle);
  const nc = connections[Math.floor(i / Number(perConnection))]!;
  const agent = await startNodeAgent(nc, { siteId: site, nodeId, stateDir, bootId, heartbeatIntervalMs: Number(heartbeatMs), log });
  await agent.registered;
  return agent;
}

const total = Number(count);
for (let c = 0; c < Math.ceil(total / Number(perConnection)); c++) connections.push(await connectNats(natsUrl, `bench-hosts-${c}`));
// In batches: registration is a round trip through the control plane per agent.
for (let i = 0; i < total; i += 50) agents.push(...(await Promise.all(Array.from({ length: Math.min(50, total - i) }, (_, k) => startHost(i + k)))));
console.log('HOSTS-READY');

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  for (const agent of agents) await agent.stop().catch(() => undefined);
  for (const nc of connections) await nc.drain().catch(() => undefined);
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
// The bench holds our stdin: when it ends (the bench exited, however), so do the hosts.
process.stdin.on('end', () => void shutdown());
process.stdin.resume();
