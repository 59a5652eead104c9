import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { Streams } from '../../schemas/subjects.ts';
import { parseJoinToken } from '../../schemas/trust/joinTokens.ts';
import { ramdiskParamsOf } from '../../daemon/site/ipxeScript.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { startImageServer } from '../support/imageServer.ts';
import { readPrefix } from '../support/diskFile.ts';
import { leaks, streamMessages } from '../support/plaintextScan.ts';

describe('a site that joins with tokens (no broker)', () => {
  it('joins its site agent and each boot ramdisk with single-use tokens and deploys a machine, leaking no token', { timeout: 120_000 }, async () => {
    const captured: string[] = [];
    const log = createLogger('joined-site-test', 'debug', { write: (line: string) => void captured.push(line) });
    await using engine = await startEngine();
    await using image = await startImageServer();
    const { nc, store, bus } = engine;
    const joins = startJoinService(nc, store, log);
    const bootTokens = startBootTokenService(nc, store, log);
    const simDir = join(engine.dataDir, 'sim', 'js');
    const site = await startSimulatedSite(
      nc,
      {
        siteId: 'js',
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
    const nodeId = 'js-m001';
    try {
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
      // A machine that no workflow is booting has no boot URL: no ticket exists before a reset into the ramdisk.
      expect(site.siteAgent!.bootUrlFor(nodeId)).toBeUndefined();

      await bus.execute({
        name: 'metal.deploy',
        payload: { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker', sshKeys: ['ssh-ed25519 AAAA test'] },
        commandId: 'deploy-js-m001-1',
        actor: 'test',
      });
      await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed', 90_000);
      const machine = site.machines[0]!;
      expect(readPrefix(machine.disks[0]!, image.image.length).equals(image.image)).toBe(true);

      const scripts = machine.bootScripts;
      expect(scripts).toHaveLength(1);
      const token = ramdiskParamsOf(scripts[0]!).join!;
      const parsed = parseJoinToken(token);
      expect(parsed).toBeDefined();

      const events = await streamMessages(nc, Streams.events.name);
      const types = (subject: string) =>
        events.filter((m) => m.subject === subject).map((m) => JSON.parse(m.text.slice(m.text.indexOf('\n') + 1)).events[0].type);
      expect(types(`bc.evt.trust.joinToken.${parsed!.tokenId}`)).toEqual(['JoinTokenCreated', 'JoinTokenUsed']);
      // The ramdisk token expected the machine's own SMBIOS UUID, the one Redfish reported at inspection.
      const created = events.find((m) => m.subject === `bc.evt.trust.joinToken.${parsed!.tokenId}`)!;
      const node = await engine.nodeState(nodeId);
      expect(node.exists && node.inventory?.productUuid).toBeTruthy();
      expect(created.text).toContain(node.exists ? node.inventory!.productUuid! : 'none');
      expect(types('bc.evt.trust.agent.site-js')).toEqual(['AgentRegistered']);
      expect(events.some((m) => m.subject.startsWith('bc.evt.trust.joinToken.') && m.text.includes('"role":"site"'))).toBe(true);

      const commands = await streamMessages(nc, Streams.agentCommands.name);
      expect(commands.length).toBeGreaterThan(3);
      const places = [
        ...events.map((m) => ({ where: `BC_EVENTS#${m.seq}`, text: m.text })),
        ...commands.map((m) => ({ where: `BC_AGENT_COMMANDS#${m.seq}`, text: m.text })),
        { where: 'logs', text: captured.join('') },
      ];
      expect(leaks([token, parsed!.secret], places)).toEqual([]);
      // A spent boot token does not boot a second ramdisk.
      const reuse = await nc.request('bc.join.ramdisk', JSON.stringify({ token, publicKey: Buffer.alloc(32, 7).toString('base64'), siteId: 'js', nodeId }));
      expect(reuse.json()).toMatchObject({ ok: false, error: { code: 'JOIN_TOKEN_USED' } });
    } finally {
      await site.stop();
      await bootTokens.stop();
      await joins.stop();
    }
  });
});
