import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { AgentCommand, newNonce } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult } from '../../schemas/agent/agentResultCodec.ts';
import { sealingAad } from '../../schemas/secrets/sealed.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startControlPlaneResultIntake } from '../../services/agents/resultIntake.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { startGrantService } from '../../services/secrets/grantService.ts';
import { loadMasterKey, MasterKey } from '../../services/secrets/masterKey.ts';
import { seal } from '../../services/secrets/sealing.ts';
import { issueSecretTicket } from '../../services/secrets/secretTicket.ts';
import { sendAgentCommand, storedResult } from '../../services/agents/agentExchange.ts';
import { startBackbone } from '../support/backboneFixture.ts';

describe('site.httpProxy secret headers', () => {
  it('are granted to the site agent for exactly the command whose executor ticket names them', { timeout: 60_000 }, async () => {
    await using backbone = await startBackbone();
    const { nc, store, bus, config, log } = backbone;
    const responder = serveCommands(nc, bus, log);
    // The site agent registers its key on its own registration subject, which the join process answers.
    const registrations = startRegistrationService(nc, store, log);
    // The result intake (every executor runs one) stores the site agent's answers.
    const intake = await startControlPlaneResultIntake(nc, { repository: bus.repository, bus, log });
    const masterKey = loadMasterKey(config);
    const grants = startGrantService(nc, store, masterKey, log);
    const seen: IncomingHttpHeaders[] = [];
    const machineApi = createServer((req, res) => (seen.push(req.headers), res.end('{"version":"v1.8.0"}')));
    await new Promise<void>((r) => machineApi.listen(0, '127.0.0.1', r));
    const site = await startSimulatedSite(
      nc,
      { siteId: 'tk', machines: 1, bmcPortBase: 0, dataDir: join(backbone.dataDir, 'sim'), diskSizeBytes: 1 << 20, bmcDelayMs: 0 },
      log,
    );
    try {
      await site.siteAgent!.registered;
      const put = (secretId: string, kind: string, value: string) =>
        bus.execute({ name: 'secrets.put', payload: { secretId, kind, version: 1, sealed: seal(value, masterKey, sealingAad(secretId, 1)) }, actor: 'test' });
      await put('talos-token', 'generic', 'Bearer talos-secret-value');
      await put('other-token', 'generic', 'Bearer other-value');
      const node = (await bus.repository.load(nodeAggregate, 'tk-m001')).state;
      if (!node.exists) throw new Error('node not enrolled');
      const jsm = await jetstreamManager(nc);

      let n = 0;
      const proxy = async (ticketFor: ((commandId: string, notAfter: string) => string) | undefined, ref = 'secret:talos-token') => {
        const commandId = `tkt-${process.pid}-${++n}-s0-a1`;
        const notAfter = new Date(Date.now() + 30_000).toISOString();
        const params = {
          url: `http://127.0.0.1:${(machineApi.address() as AddressInfo).port}/machine/version`,
          secretHeaders: { Authorization: ref },
          ...(ticketFor ? { secretTicket: ticketFor(commandId, notAfter) } : {}),
        };
        const command = AgentCommand.parse({
          commandId,
          kind: 'site.httpProxy',
          siteId: 'tk',
          nodeId: 'tk-m001',
          workflowId: `tkt-${process.pid}`,
          stepIndex: 0,
          attempt: 1,
          destructive: true,
          params,
          bmc: node.bmc,
          issuedAt: new Date().toISOString(),
          notAfter,
          nonce: newNonce(),
        });
        await sendAgentCommand({ js: backbone.store.js }, command);
        for (let i = 0; i < 200; i++) {
          const stored = await storedResult({ jsm }, command);
          if (stored) return decodeSignedResult(stored.data).result;
          await sleep(50);
        }
        throw new Error(`no result for ${commandId}`);
      };

      const ticket =
        (refs: string[], key: MasterKey = masterKey, nodeId = 'tk-m001') =>
        (commandId: string, notAfter: string) =>
          issueSecretTicket(key, { commandId, nodeId, refs, notAfter });
      const ok = await proxy(ticket(['secret:talos-token']));
      expect(ok).toMatchObject({ ok: true, payload: { status: 200, body: '{"version":"v1.8.0"}' } });
      expect(seen.at(-1)!.authorization).toBe('Bearer talos-secret-value');
      // The secret value stays on the site: not in the command, not in the result.
      expect(JSON.stringify(ok)).not.toContain('talos-secret-value');

      const refused = [
        await proxy(undefined),
        await proxy(ticket(['secret:other-token'])),
        await proxy(ticket(['secret:talos-token'], new MasterKey(Buffer.alloc(32, 7)))),
        await proxy(ticket(['secret:talos-token'], masterKey, 'another-node')),
      ];
      expect(refused.map((r) => [r.ok, r.errorCode])).toEqual(Array(4).fill([false, 'CREDENTIALS_MISSING']));
      expect(seen).toHaveLength(1);

      // BMC credentials never go into headers, even with a valid ticket naming them.
      await put('tk-m001-bmc2', 'bmc', '{"username":"u","password":"p"}');
      const bmc = await proxy(ticket(['secret:tk-m001-bmc2']), 'secret:tk-m001-bmc2');
      expect([bmc.ok, bmc.errorCode, bmc.errorMessage]).toEqual([false, 'CREDENTIALS_MISSING', expect.stringContaining('GRANT_NOT_AUTHORISED')]);
      expect(seen).toHaveLength(1);
    } finally {
      await site.stop();
      machineApi.close();
      await grants.stop();
      responder.unsubscribe();
      await registrations.stop();
      await intake.stop();
    }
  });
});
