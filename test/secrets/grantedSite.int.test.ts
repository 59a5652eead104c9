import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { verifyAgentResult, type VerifiedAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { newNonce, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startControlPlaneResultIntake } from '../../services/agents/resultIntake.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { startGrantService } from '../../services/secrets/grantService.ts';
import { loadMasterKey } from '../../services/secrets/masterKey.ts';
import { secretAggregate } from '../../services/secrets/secret/secret.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { filesUnder, leaks } from '../support/plaintextScan.ts';

describe('simulated site on sealed secrets', () => {
  it('stores its BMC credentials sealed and its site agent drives a BMC with granted credentials', { timeout: 60_000 }, async () => {
    const captured: string[] = [];
    const log = createLogger('granted-site-test', 'debug', { write: (line: string) => void captured.push(line) });
    await using backbone = await startBackbone();
    const { nc, store, bus, config } = backbone;
    const responder = serveCommands(nc, bus, log);
    // The site agent registers its key on its own registration subject, which the join process answers.
    const registrations = startRegistrationService(nc, store, log);
    // The result intake (every executor runs one) stores the site agent's answers.
    const intake = await startControlPlaneResultIntake(nc, { repository: bus.repository, bus, log });
    const masterKey = loadMasterKey(config);
    const grants = startGrantService(nc, store, masterKey, log);
    const grantRequests: string[] = [];
    const spy = nc.subscribe(Subjects.secretGrant, { callback: (_e, m) => void grantRequests.push(m.subject) });
    const simDir = join(backbone.dataDir, 'sim', 'gs');
    const site = await startSimulatedSite(
      nc,
      {
        siteId: 'gs',
        machines: 1,
        bmcPortBase: 0,
        dataDir: simDir,
        diskSizeBytes: 1 << 20,
        bmcDelayMs: 10,
        secrets: { masterKey },
        inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
      },
      log,
    );
    try {
      await site.siteAgent!.registered;
      // No plaintext credentials file on the site: the only copy is the sealed secret.
      expect(existsSync(join(simDir, 'site-agent', 'credentials.json'))).toBe(false);
      const secret = await bus.repository.load(secretAggregate, 'gs-m001-bmc');
      expect(secret.state).toMatchObject({ exists: true, kind: 'bmc', version: 1, keyId: masterKey.keyId });

      const node = (await bus.repository.load(nodeAggregate, 'gs-m001')).state;
      if (!node.exists) throw new Error('simulated node not enrolled');
      expect(node.bmc.credentialsRef).toBe('secret:gs-m001-bmc');
      const now = Date.now();
      const command: AgentCommand = {
        commandId: `grant-inv-${process.pid}-s0-a1`,
        kind: 'inventory.read',
        siteId: 'gs',
        nodeId: 'gs-m001',
        workflowId: `grant-inv-${process.pid}`,
        stepIndex: 0,
        attempt: 1,
        destructive: false,
        params: {},
        bmc: node.bmc,
        issuedAt: new Date(now).toISOString(),
        notAfter: new Date(now + 60_000).toISOString(),
        nonce: newNonce(),
      };
      await jetstream(nc).publish(Subjects.siteAgentCommands('gs', 'gs-m001'), JSON.stringify(command), { msgID: command.commandId });
      const jsm = await jetstreamManager(nc);
      let verdict: VerifiedAgentResult | undefined;
      for (let i = 0; !verdict && i < 300; i++) {
        const msg = await jsm.direct.getMessage(Streams.agentResults.name, {
          last_by_subj: Subjects.acceptedAgentResult('gs', 'gs-m001', command.commandId, command.nonce),
        });
        if (msg) {
          const agent = (await bus.repository.load(agentAggregate, 'site-gs')).state;
          verdict = verifyAgentResult(msg.data, command, (id) => (agent.exists && agent.agentId === id ? agent : undefined));
        } else await sleep(50);
      }
      // The BMC simulator only answers with the right user and password: an ok inventory proves the grant delivered them.
      expect(verdict).toMatchObject({ ok: true, result: { ok: true, errorCode: '' } });
      expect(JSON.stringify((verdict as { result: { payload: unknown } }).result.payload)).toContain('"disks"');
      expect(grantRequests).toHaveLength(1);
      expect(captured.join('')).toContain('secret granted');
      // The simulator's password (a known constant of the simulated site) is in no file and no log line.
      const places = [...filesUnder(backbone.dataDir).map((f) => ({ where: f.path, text: f.bytes })), { where: 'logs', text: captured.join('') }];
      expect(leaks(['sim-password'], places)).toEqual([]);
    } finally {
      await site.stop();
      spy.unsubscribe();
      await grants.stop();
      responder.unsubscribe();
      await registrations.stop();
      await intake.stop();
    }
  });
});
