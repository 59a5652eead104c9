import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AgentKeyring } from '../../daemon/agent/agentKeyring.ts';
import { identityOf } from '../../daemon/agent/identity.ts';
import { startPresenceHeartbeats } from '../../daemon/agent/presenceHeartbeats.ts';
import { startPluginsFolder } from '../../daemon/bcx/pluginsFolder.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import { startAgentPresence } from '../../services/agents/agentPresence.ts';
import type { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { bcxPluginFolder } from '../support/bcxPluginFolder.ts';
import { startTestNats } from '../support/natsServer.ts';

const log = createLogger('bcx-test', 'silent');

describe('bcx drivers in the heartbeat', () => {
  it("advertises the plugins of bcd node's folder that said hello, and the control plane's presence shows them", async () => {
    using plugins = await bcxPluginFolder();
    plugins.pin('memory-runtime');
    plugins.pin('stale-runtime', [], 'b'.repeat(64));
    const running = await startPluginsFolder(plugins.folder, { stateRoot: plugins.stateRoot, privileged: new Set(), log });
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'api');
    const host = await connectNats(nats.url, 'agents');
    const identity = new AgentKeyring(identityOf(generateKeyPairSync('ed25519').privateKey));
    const agent: AgentState = {
      exists: true,
      agentId: 'node-n1',
      role: 'node',
      siteId: 'dc1',
      nodeId: 'n1',
      publicKey: identity.publicKeyBase64,
      keyId: identity.keyId,
      joinTokenIds: [],
    };
    const repository = { load: async () => ({ state: agent }) } as unknown as AggregateRepository;
    const presence = startAgentPresence(nc, { repository, windowMs: 5_000, log });
    await nc.flush();
    const beats = startPresenceHeartbeats(host, {
      agentId: 'node-n1',
      siteId: 'dc1',
      nodeId: 'n1',
      identity,
      startedAt: new Date(),
      lastError: () => undefined,
      drivers: () => running.drivers(),
      intervalMs: 100,
    });
    try {
      // The plugin whose pin is wrong is not run, and not advertised.
      expect(running.unusable).toEqual([expect.objectContaining({ code: 'PLUGIN_PIN_MISMATCH' })]);
      await expect
        .poll(() => presence.presenceOf('n1')?.presence.drivers, { timeout: 5_000 })
        .toEqual([{ id: 'memory-runtime', version: '1.2.3', kinds: ['runtime'] }]);
      await running.stop();
      await expect.poll(() => presence.presenceOf('n1')?.presence.drivers, { timeout: 5_000 }).toEqual([]);
    } finally {
      beats.stop();
      await running.stop();
      await presence.stop();
      await host.close();
      await nc.close();
    }
  });
});
