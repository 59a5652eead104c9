import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askKeyStatus } from '../../daemon/agent/keyRotationWatch.ts';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { startBrokerEngine } from './brokerEngineFixture.ts';

describe('the key rotation lane in operator mode', () => {
  it(
    "the simulated site's agent asked for its key status as anonymous, the broker refused, and a requested rotation never happened (regression): it rotates when asked",
    { timeout: 90_000 },
    async () => {
      await using engine = await startBrokerEngine();
      const site = await startSimulatedSite(
        engine.nc,
        {
          siteId: 'kr',
          machines: 0,
          bmcPortBase: 0,
          dataDir: join(engine.dataDir, 'sim'),
          join: { joinCreds: engine.joinCreds },
          inProcess: engine.send,
          keyCheckIntervalMs: 300,
        },
        engine.log,
      );
      try {
        const agent = site.siteAgent!;
        await agent.registered;
        const keyOf = async () => {
          const { state } = await engine.bus.repository.load(agentAggregate, agent.agentId);
          return state.exists ? state : undefined;
        };
        const before = (await keyOf())!.keyId;
        expect(agent.keyId).toBe(before);
        await engine.send('agent.rotateKey', { agentId: agent.agentId, reason: 'test' }, 'rotate-site-kr-0001');
        // The agent asks on its own subject, rotates with the registered key's signature, and the request is settled.
        // The control plane takes the new key before its answer reaches the agent, which only then signs with it.
        await expect.poll(async () => (await keyOf())?.keyId, { timeout: 30_000 }).not.toBe(before);
        await expect.poll(() => agent.keyId, { timeout: 10_000 }).not.toBe(before);
        expect(await keyOf()).toMatchObject({ keyId: agent.keyId, rotationRequestedFor: null });
      } finally {
        await site.stop();
      }
    },
  );

  it('an agent asking on a subject its credential may not publish is told the broker refuses it, not that nobody answered', { timeout: 60_000 }, async () => {
    await using engine = await startBrokerEngine();
    await engine.send('site.create', { siteId: 'kq', name: 'kq' }, 'site-create-kq');
    const site = await engine.joinAgent('site', 'kq');
    const asked = await askKeyStatus(site.nc, site.agentId).then(
      () => 'answered',
      (err: unknown) => (err instanceof PlatformError ? err.code : String(err)),
    );
    expect(asked).toBe('BROKER_PERMISSION_DENIED');
    // On its own subject it is answered.
    expect(await askKeyStatus(site.nc, site.agentId, { userPublicKey: site.userPublicKey! })).toMatchObject({ agentId: 'site-kq', rotationRequested: false });
  });
});
