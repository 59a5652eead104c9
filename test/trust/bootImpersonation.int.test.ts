import { closeSync, openSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { loadOrCreateIdentity } from '../../daemon/agent/identity.ts';
import { connectJoinedAgent } from '../../daemon/agent/joinedConnection.ts';
import { startRamdiskAgent, type RamdiskAgent } from '../../daemon/ramdisk/ramdiskAgent.ts';
import { ramdiskParamsOf } from '../../daemon/site/ipxeScript.ts';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { Streams } from '../../schemas/subjects.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';
import { streamMessages } from '../support/plaintextScan.ts';

/**
 * Issue 31, finding 1: a tenant who learned its machine's boot URL (proxy-DHCP answers its own NIC; the script travels
 * over plain HTTP) and reads its product UUID from /sys/class/dmi/id fetches the script as soon as the reset makes
 * it exist, joins as the ramdisk with the token on its kernel line and runs a ramdisk agent on a disk of its own.
 * Before the fix `wait.agentJoined` took it and the node ended `deployed` on an untouched disk.
 */
describe('a ramdisk impersonated through the boot URL', () => {
  it('contests the boot: the workflow fails closed, the node goes to maintenance and its disk is not imaged', { timeout: 180_000 }, async () => {
    await using engine = await startEngine();
    await using image = await startImageServer();
    const { nc, store, bus, log } = engine;
    const joins = startJoinService(nc, store, log);
    const bootTokens = startBootTokenService(nc, store, log);
    const simDir = join(engine.dataDir, 'sim', 'im');
    const site = await startSimulatedSite(
      nc,
      {
        siteId: 'im',
        machines: 1,
        bmcPortBase: 0,
        dataDir: simDir,
        diskSizeBytes: 4 << 20,
        bmcDelayMs: 10,
        join: {},
        inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
      },
      log,
    );
    const nodeId = 'im-m001';
    const machine = site.machines[0]!;
    const attacker: { nc?: NatsConnection; agent?: RamdiskAgent; fetched: number[] } = { fetched: [] };
    try {
      const enrolled = await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
      const productUuid = enrolled.exists ? enrolled.inventory!.productUuid! : '';
      await bus.execute({
        name: 'metal.deploy',
        payload: { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker' },
        commandId: 'deploy-im-m001',
        actor: 'test',
      });

      // The tenant asks as early and as often as it can, until it has a script or the boot is over.
      let script: string | undefined;
      const until = Date.now() + 60_000;
      while (!script && Date.now() < until) {
        const url = site.siteAgent!.bootUrlFor(nodeId);
        const answer = url ? await fetch(url) : undefined;
        if (answer) attacker.fetched.push(answer.status);
        if (answer?.status === 200) script = await answer.text();
        else if (attacker.fetched.includes(404) && machine.bootScripts.length > 0) break;
        else await sleep(2);
      }
      if (script) {
        const params = ramdiskParamsOf(script);
        const disk = join(engine.dataDir, 'tenant-disk.img');
        closeSync(openSync(disk, 'w'));
        const fd = openSync(disk, 'r+');
        ftruncateSync(fd, 4 << 20);
        closeSync(fd);
        const joined = await connectJoinedAgent({
          natsUrl: params.nats!,
          name: 'tenant-posing-as-ramdisk',
          role: 'ramdisk',
          token: params.join!,
          identity: loadOrCreateIdentity(join(engine.dataDir, 'tenant-ramdisk')),
          siteId: params.site!,
          nodeId,
          productUuid,
          log,
        });
        attacker.nc = joined.nc;
        attacker.agent = await startRamdiskAgent(joined.nc, {
          joined: { durable: joined.durable },
          siteId: params.site!,
          nodeId,
          stateDir: join(engine.dataDir, 'tenant-ramdisk'),
          disks: [{ path: disk, serial: 'TENANT', model: 'tenant' }],
          log,
        });
      }

      const failed = await engine.waitForNode(nodeId, (s) => s.exists && s.state !== 'deploying', 120_000);
      expect(failed).toMatchObject({ state: 'failed', maintenance: true });
      expect(failed.exists && failed.maintenanceReason).toContain('BOOT_CONTESTED');
      expect(readPrefix(machine.disks[0]!, image.image.length).equals(image.image)).toBe(false);

      const events = await streamMessages(nc, Streams.events.name);
      const contested = events.filter((m) => m.subject.startsWith('bc.evt.trust.ramdiskBoot.') && m.text.includes('"RamdiskBootContested"'));
      expect(contested).toHaveLength(1);
      expect(contested[0]!.text).toMatch(/"reason":"SECOND_(FETCH|REGISTRATION|TICKET)"/);
      const workflowFailures = events.filter((m) => m.text.includes('"WorkflowFailed"'));
      expect(
        workflowFailures.map(
          (m) => JSON.parse(m.text.slice(m.text.indexOf('\n') + 1)).events.find((e: { type: string }) => e.type === 'WorkflowFailed').data.code,
        ),
      ).toEqual(['BOOT_CONTESTED']);
    } finally {
      await attacker.agent?.stop();
      await attacker.nc?.close();
      await site.stop();
      await bootTokens.stop();
      await joins.stop();
    }
  });
});
