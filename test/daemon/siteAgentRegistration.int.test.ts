import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import type { AgentRegistration } from '../../daemon/agent/registration.ts';
import { startSiteAgent } from '../../daemon/site/siteAgent.ts';
import { startBmcSimulator } from '../../daemon/simulator/bmc/index.ts';
import { keyIdOf, verifyAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { startTestNats, tempDir } from '../support/natsServer.ts';
import { agentCommand, log, startKeyedResultIntake } from './harness.ts';

const PASSWORD = 'site-agent-Secret-42';

describe('bcd site before its registration is answered', () => {
  it('runs no command until the control plane knows its key, then answers with a result that verifies', { timeout: 60_000 }, async () => {
    await using nats = await startTestNats();
    using dir = tempDir('bc-site-reg-');
    const nc = await connectNats(nats.url, 'test');
    await ensureStreams(nc, { streamReplicas: 1, duplicateWindowMs: 120_000 });
    const jsm = await jetstreamManager(nc);
    const bmc = await startBmcSimulator({ tree: 'hpe-ilo5-dl325', username: 'admin', password: PASSWORD, powerDelayMs: 20, mediaDelayMs: 20 });
    const resets = () => bmc.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('ComputerSystem.Reset')).length;
    const stateDir = join(dir.path, 'site');
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(join(stateDir, 'credentials.json'), JSON.stringify({ 'secret:n1-bmc': { username: 'admin', password: PASSWORD } }));
    // The join service is not up yet: registrations go unanswered (the agent retries).
    const agent = await startSiteAgent(nc, {
      siteId: 'dc1',
      stateDir,
      natsUrl: nats.url,
      credentials: { labFile: join(stateDir, 'credentials.json') },
      redfish: { auth: 'basic', timeoutMs: 3_000, timing: { pollIntervalMs: 5, powerTimeoutMs: 3_000, mediaTimeoutMs: 3_000 } },
      log,
    });
    try {
      const cmd = agentCommand('power.set', { params: { action: 'off' }, bmc: { address: bmc.url, credentialsRef: 'secret:n1-bmc' } });
      await jetstream(nc).publish(Subjects.siteAgentCommands(cmd.siteId, cmd.nodeId), JSON.stringify(cmd), { msgID: cmd.commandId });
      const stored = () =>
        jsm.direct.getMessage(Streams.agentResults.name, { last_by_subj: Subjects.acceptedAgentResult(cmd.siteId, cmd.nodeId, cmd.commandId, cmd.nonce) });
      await sleep(1_500);
      expect(await stored()).toBeNull();
      expect(resets()).toBe(0);

      // The join service comes up and answers; the command runs, and its result verifies against the registered key.
      const registrations: AgentRegistration[] = [];
      const sub = nc.subscribe(Subjects.allAgentRegistrations, {
        callback: (_err, msg) => {
          const r = msg.json<AgentRegistration>();
          registrations.push(r);
          msg.respond(
            JSON.stringify({
              ok: true,
              result: { commandId: 'register-1', aggregate: { type: 'agent', id: r.agentId }, seq: 1, duplicate: false, events: [] },
            }),
          );
        },
      });
      const keyFor = (agentId: string) => {
        const r = registrations.findLast((x) => x.agentId === agentId);
        return r && { keyId: keyIdOf(Buffer.from(r.publicKey, 'base64')), publicKey: r.publicKey, role: r.role, siteId: r.siteId, nodeId: r.nodeId ?? null };
      };
      await using _intake = await startKeyedResultIntake(nc, keyFor).then((i) => ({ [Symbol.asyncDispose]: () => i.stop() }));
      await agent.registered;
      let msg = await stored();
      for (let i = 0; !msg && i < 200; i++) msg = (await sleep(50), await stored());
      sub.unsubscribe();
      expect(msg).not.toBeNull();
      expect(verifyAgentResult(msg!.data, cmd, keyFor)).toMatchObject({ ok: true, result: { ok: true, agentId: 'site-dc1' } });
      expect([resets(), bmc.state.powerState]).toEqual([1, 'Off']);
    } finally {
      await agent.stop();
      await bmc.close();
      await nc.close();
    }
  });
});
