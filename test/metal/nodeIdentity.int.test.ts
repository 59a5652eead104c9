import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { identityKey } from '../../schemas/metal/nodeIdentity.ts';
import { startEngine } from './engineFixture.ts';

describe('one machine, one node: enrolment and inspection refuse a second node for the same machine', () => {
  it(
    'refuses a second node at the same BMC system, and fails the inspection of a third at another address that reads the same system UUID',
    { timeout: 120_000 },
    async () => {
      await using engine = await startEngine();
      const site = await startSimulatedSite(
        engine.nc,
        { siteId: 'id', machines: 1, bmcPortBase: 0, dataDir: join(engine.dataDir, 'sim'), bmcDelayMs: 5 },
        engine.log,
      );
      try {
        const first = await engine.waitForNode('id-m001', (s) => s.exists && s.state === 'ready');
        if (!first.exists) throw new Error('unreachable');
        const uuid = first.inventory?.productUuid;
        expect(uuid).toEqual(expect.any(String));
        const { address, credentialsRef } = first.bmc;
        const enroll = (nodeId: string, bmcAddress: string) =>
          engine.bus.execute({
            name: 'metal.enroll',
            payload: { nodeId, siteId: 'id', bmc: { address: bmcAddress, credentialsRef }, hardwareProfile: first.hardwareProfile, macs: first.macs },
            actor: 'test',
          });

        // The same BMC and system, spelled as its root, its Redfish root and with a trailing slash: one machine.
        for (const [i, same] of [address, `${address}/redfish/v1`, `${address}/`].entries())
          await expect(enroll(`id-dup${i}`, same)).rejects.toMatchObject({ code: 'NODE_IDENTITY_CONFLICT', message: expect.stringContaining('id-m001') });
        expect((await engine.nodeState('id-dup0')).exists).toBe(false);

        // Another address of the same BMC (localhost instead of 127.0.0.1): enrolment cannot tell, inspection can.
        const elsewhere = address.replace('127.0.0.1', 'localhost');
        expect(identityKey({ kind: 'bmcSystem', address: elsewhere })).not.toBe(identityKey({ kind: 'bmcSystem', address }));
        await enroll('id-twin', elsewhere);
        const twin = await engine.waitForNode('id-twin', (s) => s.exists && (s.state === 'failed' || s.state === 'ready'));
        expect(twin).toMatchObject({
          state: 'failed',
          failed: { operation: 'inspect', reason: expect.stringMatching(/^NODE_IDENTITY_CONFLICT: node id-m001 .*system UUID/) },
        });
        expect(twin.exists && twin.inventory?.productUuid).toBe(uuid);
        // The node that held the machine first keeps it.
        expect(await engine.nodeState('id-m001')).toMatchObject({ state: 'ready' });
      } finally {
        await site.stop();
      }
    },
  );
});
