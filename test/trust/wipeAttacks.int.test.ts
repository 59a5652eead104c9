import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { AgentCommand, newNonce } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
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

/** Every result BC_AGENT_RESULTS holds, with the agent it names as its signer (if it decodes). */
async function storedResults(nc: NatsConnection): Promise<{ subject: string; signer: string | undefined }[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(Streams.agentResults.name);
  const out: { subject: string; signer: string | undefined }[] = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(Streams.agentResults.name, { seq }).catch(() => null);
    if (!m) continue;
    let signer: string | undefined;
    try {
      signer = decodeSignedResult(m.data).result.agentId;
    } catch {
      signer = undefined;
    }
    out.push({ subject: m.subject, signer });
  }
  return out;
}

describe('wipe attestation under broker permissions', () => {
  it(
    'a tenant attests its own wipe (regression): a node-agent signature and results published before their command are refused, the wipe is sent and the disk zeroed; 300 forged results are refused by the result intake and store nothing',
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
        // Each publish is answered by the result intake: what it stored (never, here) or why it refused.
        const refusals: string[] = [];
        const attempt = (subject: string, bytes: Uint8Array) =>
          hostJs.publish(subject, bytes).then(
            () => refusals.push('stored'),
            (err: Error) => refusals.push(err.message.split(':')[0]!),
          );
        const early = newNonce();
        await attempt(`bc.site.${siteId}.res.${nodeId}.${wipeId}`, forge(wipeId, early));
        await attempt(Subjects.agentResult(siteId, nodeId, wipeId, early), forge(wipeId, early));

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
            await attempt(subject, forge(command.commandId, command.nonce));
            // Text never decodes as a signed result ('g' is protobuf wire type 7); random bytes now and then would.
            await attempt(subject, Buffer.from(`garbage ${randomBytes(16).toString('hex')}`));
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

        // Nothing the host published was stored: the intake refused each with a code (the early ones name no command
        // that was sent; the rest are not the answer of the agent the wipe was for). BC_AGENT_RESULTS holds the
        // ramdisk's one answer to the wipe, and no result the host signed; nothing reached the step, so the workflow's
        // log did not grow with them either.
        expect(refusals.slice(0, 2)).toEqual(['RESULT_SUBJECT_INVALID', 'RESULT_COMMAND_UNKNOWN']);
        expect(refusals.slice(2)).toEqual(Array.from({ length: FORGED }, () => 'RESULT_REFUSED'));
        const stored = await storedResults(engine.nc);
        expect(stored.filter((m) => m.signer === host.agentId)).toEqual([]);
        expect(stored.filter((m) => m.subject === Subjects.acceptedAgentResult(siteId, nodeId, answered!.commandId, answered!.nonce))).toEqual([
          { subject: Subjects.acceptedAgentResult(siteId, nodeId, answered!.commandId, answered!.nonce), signer: answered!.agentId },
        ]);
        const events = (await streamMessages(engine.nc, Streams.events.name))
          .filter((m) => m.subject === Subjects.aggregateEvents('metal', 'workflow', workflowId))
          .flatMap((m) => (JSON.parse(m.text.slice(m.text.indexOf('\n') + 1)) as { events: { type: string; data: Record<string, unknown> }[] }).events);
        expect(events.filter((e) => e.type === 'AgentResultRejected' || e.type === 'AgentResultsRejectedCounted')).toEqual([]);
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
