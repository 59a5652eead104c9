import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNodeAgent } from '../../daemon/node/nodeAgent.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startApi } from '../support/apiFixture.ts';
import { deployedNode } from '../support/deployedNode.ts';

describe('a deployed host in the API', () => {
  it("regression (the API said connected: true for a host whose bcd node had died): connected follows bcd node's heartbeats", { timeout: 90_000 }, async () => {
    await using env = await startApi({ config: { agentPresenceWindowMs: 1_500 } });
    const registrations = startRegistrationService(env.nc, env.store, env.log);
    const seq = await deployedNode(env.bus, 'n1');
    const node = async () => (await env.app.inject({ url: `/v1/nodes/n1?minSeq=${seq}` })).json();
    expect(await node()).toMatchObject({ state: 'deployed', connected: false });

    const nc = await connectNats(env.nats.url, 'bcd-node-n1');
    const agent = await startNodeAgent(nc, { siteId: 'dc1', nodeId: 'n1', stateDir: join(env.dataDir, 'host'), heartbeatIntervalMs: 300, log: env.log });
    await agent.registered;
    await expect.poll(async () => (await node()).connected, { timeout: 20_000, interval: 200 }).toBe(true);

    // The agent dies: nothing is appended, nothing else happens; the window alone turns the node disconnected.
    await agent.stop();
    await nc.close();
    await expect.poll(async () => (await node()).connected, { timeout: 20_000, interval: 200 }).toBe(false);
    // What it last said stays visible: which agent, since when it ran, its last error.
    expect((await node()).lastHeartbeat).toMatchObject({ agentId: 'node-n1', role: 'node', startedAt: expect.any(String), lastError: null });
    await registrations.stop();
  });
});
