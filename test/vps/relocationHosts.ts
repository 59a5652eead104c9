import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import { startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import type { Logger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';

interface Host {
  agent: NodeAgent;
  nc: NatsConnection;
  plugins: Awaited<ReturnType<typeof startPluginsFolder>>;
  folder: Awaited<ReturnType<typeof bcxPluginFolder>>;
  stateDir: string;
}

/**
 * The installed hosts of deployed nodes, each a real in-process `bcd node` with the test runtime plugin
 * (`process-runtime`) pinned in its own plugins folder. `powerOff` is what a release, a retirement or a power loss does
 * to the host: its `bcd node` stops and the processes its instances ran in die with it.
 */
export function relocationHosts(natsUrl: string, log: Logger) {
  const hosts = new Map<string, Host>();
  const pidsOf = (nodeId: string): Record<string, { pid: number | null }> => {
    const host = hosts.get(nodeId);
    if (!host) return {};
    try {
      return JSON.parse(readFileSync(join(host.folder.stateRoot, 'plugins/process-runtime/instances.json'), 'utf8')) as Record<string, { pid: number | null }>;
    } catch {
      return {};
    }
  };
  const stopAgent = async (host: Host) => {
    await host.agent.stop().catch(() => undefined);
    await host.nc.close().catch(() => undefined);
    await host.plugins.stop();
  };
  const kill = (nodeId: string) => {
    for (const { pid } of Object.values(pidsOf(nodeId))) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already: its host removed it.
      }
    }
  };
  const dispose = async (nodeId: string, host: Host) => {
    await stopAgent(host);
    kill(nodeId);
    rmSync(host.stateDir, { recursive: true, force: true });
    host.folder[Symbol.dispose]();
    hosts.delete(nodeId);
  };
  return {
    /** Starts `nodeId`'s host (a fresh one: a redeployed node's disk holds a new image, so nothing of the last host). */
    async start(siteId: string, nodeId: string): Promise<void> {
      const previous = hosts.get(nodeId);
      if (previous) await dispose(nodeId, previous);
      const folder = await bcxPluginFolder('processRuntime');
      folder.pin('process-runtime');
      const plugins = await startPluginsFolder(folder.folder, { stateRoot: folder.stateRoot, privileged: new Set(), log });
      const stateDir = mkdtempSync(`/var/tmp/bc-relocate-${nodeId}-`);
      const nc = await connectNats(natsUrl, `bcd-node-${nodeId}`);
      const agent = await startNodeAgent(nc, {
        siteId,
        nodeId,
        stateDir,
        heartbeatIntervalMs: 100,
        reconcileIntervalMs: 500,
        bootId: () => `boot-${stateDir}`,
        log,
        runtimes: () => plugins.hosts.values(),
        drivers: () => plugins.drivers(),
      });
      hosts.set(nodeId, { agent, nc, plugins, folder, stateDir });
      await agent.registered;
    },
    /** The pid of the instance's process on `nodeId`'s host (null: that host's runtime does not hold it). */
    pidOn(nodeId: string, instanceId: string): number | null {
      return pidsOf(nodeId)[instanceId]?.pid ?? null;
    },
    async powerOff(nodeId: string): Promise<void> {
      const host = hosts.get(nodeId);
      if (!host) return;
      await stopAgent(host);
      kill(nodeId);
    },
    async [Symbol.asyncDispose](): Promise<void> {
      for (const [nodeId, host] of [...hosts]) await dispose(nodeId, host);
    },
  };
}
