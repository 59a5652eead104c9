import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startNodeAgent } from '../../daemon/node/nodeAgent.ts';
import { PublishedSignal } from '../../schemas/autonomy/signals.ts';
import { Streams } from '../../schemas/subjects.ts';
import { startAgentPresence } from '../../services/agents/agentPresence.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadAutonomyConfig } from '../../services/stack/autonomy/config.ts';
import { createFleetSensors } from '../../services/stack/autonomy/wiring.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { deployedNode } from '../support/deployedNode.ts';
import { streamMessages } from '../support/plaintextScan.ts';

const HOST_SILENT_MS = 1_500;

describe('host-silent', () => {
  it(
    'fires for a deployed host whose bcd node stopped heartbeating, and not while it beats; nothing reaches the log meanwhile',
    { timeout: 90_000 },
    async () => {
      await using env = await startBackbone();
      const registrations = startRegistrationService(env.nc, env.store, env.log);
      const seq = await deployedNode(env.bus, 'n1');
      const nodes = env.readers.get('nodes')!;
      await nodes.waitFor(seq, 5_000);
      const presence = startAgentPresence(env.nc, { repository: env.bus.repository, windowMs: 1_000, log: env.log });
      const sensors = createFleetSensors(env.nc, { nodes }, loadAutonomyConfig({}, { hostSilentMs: HOST_SILENT_MS }), env.log, undefined, presence);
      const silentIn = async (passId: string) =>
        (await streamMessages(env.nc, Streams.signals.name))
          .filter((m) => m.subject.startsWith(`bc.sig.signal.${passId}.`))
          .map((m) => PublishedSignal.parse(JSON.parse(m.data)).signal)
          .filter((s) => s.kind === 'host-silent')
          .map((s) => s.key);

      const nc = await connectNats(env.nats.url, 'bcd-node-n1');
      const agent = await startNodeAgent(nc, { siteId: 'dc1', nodeId: 'n1', stateDir: join(env.dataDir, 'host'), heartbeatIntervalMs: 300, log: env.log });
      await agent.registered;
      await expect.poll(() => presence.presenceOf('n1')?.alive, { timeout: 20_000, interval: 100 }).toBe(true);
      // Past the silence threshold since the deploy and since listening: only the heartbeats keep the host quiet.
      await sleep(HOST_SILENT_MS + 500);
      const alive = await sensors.pass();
      expect(alive.sensors).toContainEqual({ sensor: 'host-liveness', ok: true, assessed: 1, signals: 0 });
      expect(await silentIn(alive.passId)).toEqual([]);

      const logEnd = await env.store.streamLastSequence();
      await agent.stop();
      await nc.close();
      await sleep(HOST_SILENT_MS + 500);
      const silent = await sensors.pass();
      expect(await silentIn(silent.passId)).toEqual(['n1']);
      // Heartbeats are not events: the liveness of a quiet fleet appended nothing to BC_EVENTS.
      expect(await env.store.streamLastSequence()).toBe(logEnd);

      await presence.stop();
      await registrations.stop();
    },
  );
});
