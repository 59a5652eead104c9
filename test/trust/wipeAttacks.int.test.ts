import { jetstream } from '@nats-io/jetstream';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { AgentCommand, newNonce } from '../../schemas/agent/agentCommand.ts';
import { signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { stepAttemptId } from '../../schemas/metal/workflow.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { agentDurableFor } from '../../services/trust/broker/permissions.ts';
import { readPrefix } from '../support/diskFile.ts';
import { startImageServer } from '../support/imageServer.ts';
import { streamMessages } from '../support/plaintextScan.ts';
import { startBrokerEngine } from './brokerEngineFixture.ts';

const siteId = 'ws';
const nodeId = 'ws-m001';
// Large enough that zeroing it takes the ramdisk longer than the host needs to answer the command it read.
const DISK_BYTES = 32 << 20;
/** Forged results the host publishes on the wipe's real subject (half signed with its key, half garbage). */
const FORGED = 300;

describe('wipe attestation under broker permissions', () => {
  it(
    'a tenant attests its own wipe (regression): a node-agent signature and results published before their command are refused, the wipe is sent and the disk zeroed; 300 forged results leave a few records and a count, not an event each',
    { timeout: 180_000 },
    async () => {
      await using engine = await startBrokerEngine();
      await using image = await startImageServer(undefined, { partitioned: true });
      const site = await startSimulatedSite(
        engine.nc,
        {
          siteId,
          machines: 1,
          bmcPortBase: 0,
          dataDir: join(engine.dataDir, 'sim'),
          diskSizeBytes: DISK_BYTES,
          bmcDelayMs: 10,
          join: { joinCreds: engine.joinCreds },
          inProcess: engine.send,
        },
        engine.log,
      );
      try {
        await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready', 60_000);
        await engine.send(
          'metal.deploy',
          { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker', sshKeys: ['ssh-ed25519 AAAA tenant'] },
          'deploy-ws-m001-1',
        );
        await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed', 90_000);
        const disk = site.machines[0]!.disks[0]!;
        expect(image.isOn(readPrefix(disk, image.image.length))).toBe(true);

        // The tenant is root on its installed host: it holds the host's node-agent credentials and signing key.
        const host = await engine.joinAgent('node', siteId, nodeId);
        const forge = (commandId: string, commandNonce: string) =>
          signAgentResult(
            {
              commandId,
              kind: 'disk.wipe',
              nodeId,
              siteId,
              agentId: host.agentId,
              ok: true,
              errorCode: '',
              errorMessage: '',
              payload: { disks: [{ verified: true }] },
              executedAtMs: Date.now(),
              commandNonce,
            },
            host.identity,
          );
        const hostJs = jetstream(host.nc);

        const undeploy = await engine.send('metal.undeploy', { nodeId }, 'undeploy-ws-m001-1');
        const workflowId = (undeploy.events[0]!.data as { workflowId: string }).workflowId;
        const wipeId = stepAttemptId(workflowId, 3, 1);
        // Attack 1, before the command exists: the old predictable subject, and the new one with a guessed nonce.
        const early = newNonce();
        await hostJs.publish(`bc.site.${siteId}.res.${nodeId}.${wipeId}`, forge(wipeId, early));
        await hostJs.publish(Subjects.agentResult(siteId, nodeId, wipeId, early), forge(wipeId, early));

        // Attack 2, once the wipe command is out: the host's own durable reads the machine's commands, so it answers
        // the real subject with the real nonce at once, signed with its node-agent key, and garbage: 300 of them, each
        // of which used to append an AgentResultRejected.
        const durable = agentDurableFor({ role: 'node', agentId: host.agentId, siteId, nodeId });
        const consumer = await hostJs.consumers.get(Streams.agentCommands.name, durable);
        let answered: AgentCommand | undefined;
        for (const deadline = Date.now() + 60_000; !answered && Date.now() < deadline;) {
          const msg = await consumer.next({ expires: 2_000 });
          if (!msg) continue;
          msg.ack();
          const command = AgentCommand.parse(msg.json());
          if (command.kind !== 'disk.wipe') continue;
          const subject = Subjects.agentResult(siteId, nodeId, command.commandId, command.nonce);
          for (let i = 0; i < FORGED / 2; i++) {
            await hostJs.publish(subject, forge(command.commandId, command.nonce));
            // Text never decodes as a signed result ('g' is protobuf wire type 7); random bytes now and then would.
            await hostJs.publish(subject, Buffer.from(`garbage ${randomBytes(16).toString('hex')}`));
          }
          answered = command;
        }
        expect(answered?.commandId).toBe(wipeId);
        // The command was addressed to the ramdisk the release booted, never to the host's agent.
        expect(answered!.agentId).toMatch(new RegExp(`^ramdisk-${nodeId}-`));

        const ready = await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready', 90_000);
        expect(ready).toMatchObject({ maintenance: false, failed: null });
        const wf = (await engine.bus.repository.load(workflowAggregate, workflowId)).state;
        if (!wf.exists) throw new Error('release workflow missing');
        expect(wf.progress[3]).toMatchObject({ status: 'succeeded', attempt: 1, output: { attested: true, agentId: answered!.agentId } });

        // The forgeries on the real subject are on record: the first of each signer with its details, the others
        // counted (the step goes on as soon as the genuine result is there, so some are never looked at). None failed
        // the step, and the log did not grow with them.
        const events = (await streamMessages(engine.nc, Streams.events.name))
          .filter((m) => m.subject === Subjects.aggregateEvents('metal', 'workflow', workflowId))
          .flatMap((m) => (JSON.parse(m.text.slice(m.text.indexOf('\n') + 1)) as { events: { type: string; data: Record<string, unknown> }[] }).events);
        const rejected = events.filter((e) => e.type === 'AgentResultRejected').map((e) => e.data);
        expect(rejected).toHaveLength(2);
        expect(rejected).toEqual(
          expect.arrayContaining([
            { workflowId, stepIndex: 3, commandId: wipeId, reason: 'NOT_AUTHORISED', agentId: host.agentId },
            { workflowId, stepIndex: 3, commandId: wipeId, reason: 'MALFORMED' },
          ]),
        );
        const counts = events.filter((e) => e.type === 'AgentResultsRejectedCounted').map((e) => e.data as { refused: number; sources: { source: string }[] });
        expect(counts.length).toBeLessThanOrEqual(2);
        const counted = counts.reduce((n, c) => n + c.refused, 0);
        expect(counted).toBeLessThanOrEqual(FORGED - rejected.length);
        for (const source of counts.flatMap((c) => c.sources.map((s) => s.source))) expect([host.agentId, 'unreadable']).toContain(source);
        expect(events.filter((e) => e.type === 'StepFailed')).toEqual([]);

        // The wipe command really went out, once, and the ramdisk really zeroed the disk.
        const commands = (await streamMessages(engine.nc, Streams.agentCommands.name)).filter((m) => m.text.includes(`"commandId":"${wipeId}"`));
        expect(commands).toHaveLength(1);
        expect(readFileSync(disk).every((b) => b === 0)).toBe(true);
      } finally {
        await site.stop();
      }
    },
  );
});
