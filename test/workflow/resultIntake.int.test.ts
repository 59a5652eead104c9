import { generateKeyPairSync } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { identityOf, type AgentIdentity } from '../../daemon/agent/identity.ts';
import { AgentCommandKinds, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { signAgentResult, verifyAgentResult, type RegisteredAgentKey } from '../../schemas/agent/agentResultCodec.ts';
import type { RefusalCount } from '../../schemas/refusals.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { startResultIntake } from '../../services/agents/resultIntake.ts';
import type { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { startRefusalCounting } from '../../services/trust/refusals/refusalCounting.ts';
import { ResultRejectedError } from '../../plugins/sdk/stepErrors.ts';
import { agentCommand, log } from '../daemon/harness.ts';
import { startTestNats } from '../support/natsServer.ts';

const siteAgent = identityOf(generateKeyPairSync('ed25519').privateKey);
const secondSiteAgent = identityOf(generateKeyPairSync('ed25519').privateKey);
const keys: Record<string, RegisteredAgentKey> = {
  'site-dc1': { keyId: siteAgent.keyId, publicKey: siteAgent.publicKeyBase64, role: 'site', siteId: 'dc1', nodeId: null },
  'site-dc1-b': { keyId: secondSiteAgent.keyId, publicKey: secondSiteAgent.publicKeyBase64, role: 'site', siteId: 'dc1', nodeId: null },
};

const sign = (command: AgentCommand, agentId: string, identity: AgentIdentity, ok = true) =>
  signAgentResult(
    {
      commandId: command.commandId,
      kind: command.kind,
      nodeId: command.nodeId,
      siteId: command.siteId,
      agentId,
      ok,
      errorCode: ok ? '' : 'DRIVER_ERROR',
      errorMessage: '',
      payload: null,
      executedAtMs: Date.now(),
      commandNonce: command.nonce,
    },
    identity,
  );

/** An intake verifying against `keys`, its refusal counts, and what a test needs to send commands and answer them. */
async function intakeOn(nc: NatsConnection) {
  await ensureStreams(nc, { streamReplicas: 1, duplicateWindowMs: 120_000 });
  const counts: RefusalCount[] = [];
  const bus = { execute: async ({ payload }: { payload: RefusalCount }) => void counts.push(payload) } as unknown as CommandBus;
  const intake = await startResultIntake(nc, {
    verify: async (command, bytes) => {
      const verdict = verifyAgentResult(bytes, command, (id) => keys[id]);
      if (!verdict.ok) throw new ResultRejectedError(command.commandId, verdict.reason);
      return verdict.result;
    },
    refusals: startRefusalCounting(bus, 'results', log, { windowMs: 60_000, recordsPerWindow: 1 }),
    log,
  });
  const js = jetstream(nc);
  const send = async (command: AgentCommand, subject?: string) =>
    js.publish(
      subject ??
        (AgentCommandKinds[command.kind].runsOn === 'site'
          ? Subjects.siteAgentCommands('dc1', command.nodeId)
          : Subjects.nodeAgentCommands('dc1', command.nodeId)),
      JSON.stringify(command),
      { msgID: command.commandId },
    );
  const answer = (command: AgentCommand, bytes: Uint8Array) =>
    js.publish(Subjects.agentResult(command.siteId, command.nodeId, command.commandId, command.nonce), bytes).then(
      (ack) => ({ seq: ack.seq, duplicate: ack.duplicate }),
      (err: Error) => err.message.split(':')[0],
    );
  return { intake, counts, js, jsm: await jetstreamManager(nc), send, answer };
}

describe('result intake', () => {
  it("stores a command's first result without reading its subject first, and a second signer's result beside it", { timeout: 60_000 }, async () => {
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'test');
    const { intake, send, answer, jsm } = await intakeOn(nc);
    // The intake's reads of stored results, as the broker sees them (this test makes none until it counts).
    let reads = 0;
    const watch = nc.subscribe(`$JS.API.DIRECT.GET.${Streams.agentResults.name}.>`, { callback: () => void (reads += 1) });
    const watchSeq = nc.subscribe(`$JS.API.DIRECT.GET.${Streams.agentResults.name}`, { callback: () => void (reads += 1) });
    try {
      const command = agentCommand('power.get');
      await send(command);
      expect(await answer(command, sign(command, 'site-dc1', siteAgent))).toEqual({ seq: expect.any(Number), duplicate: false });
      await nc.flush();
      expect(reads).toBe(0);
      // The subject holds a result now: another agent the command was for stores its own, once; the first signer no other.
      const second = sign(command, 'site-dc1-b', secondSiteAgent);
      const stored = await answer(command, second);
      expect(stored).toEqual({ seq: expect.any(Number), duplicate: false });
      expect(await answer(command, second)).toEqual({ seq: (stored as { seq: number }).seq, duplicate: true });
      expect(await answer(command, sign(command, 'site-dc1', siteAgent, false))).toBe('RESULT_ALREADY_STORED');
      expect((await jsm.streams.info(Streams.agentResults.name)).state.messages).toBe(2);
    } finally {
      watch.unsubscribe();
      watchSeq.unsubscribe();
      await intake.stop();
      await nc.close();
    }
  });

  it('stores one result per command and signer, answers a repeat as its duplicate, and refuses and counts the rest', { timeout: 60_000 }, async () => {
    await using nats = await startTestNats();
    const nc = await connectNats(nats.url, 'test');
    const { intake, counts, js, jsm, send, answer } = await intakeOn(nc);
    try {
      const command = agentCommand('power.get');
      await send(command);
      const first = sign(command, 'site-dc1', siteAgent);
      const stored = await answer(command, first);
      expect(stored).toEqual({ seq: expect.any(Number), duplicate: false });
      // An agent re-publishing its journaled result gets the first one's ack; a second, different result it signs is refused.
      expect(await answer(command, first)).toEqual({ seq: (stored as { seq: number }).seq, duplicate: true });
      expect(await answer(command, sign(command, 'site-dc1', siteAgent, false))).toBe('RESULT_ALREADY_STORED');
      const kept = await jsm.direct.getMessage(Streams.agentResults.name, {
        last_by_subj: Subjects.acceptedAgentResult('dc1', command.nodeId, command.commandId, command.nonce),
      });
      expect(Buffer.from(kept!.data).equals(Buffer.from(first))).toBe(true);

      // Refused, each with its code: garbage; a key nobody registered; the right key for a command never sent, or for
      // another nonce; a command sent on another node's subject; a subject that names no command.
      const forger = identityOf(generateKeyPairSync('ed25519').privateKey);
      const other = agentCommand('power.get');
      await send(other);
      const unsent = agentCommand('power.get');
      const misplaced = agentCommand('power.get', { nodeId: 'n2' });
      await send(misplaced, Subjects.siteAgentCommands('dc1', 'n1'));
      expect([
        await answer(other, Buffer.from('garbage')),
        await answer(other, sign(other, 'site-dc1', forger)),
        await answer(unsent, sign(unsent, 'site-dc1', siteAgent)),
        await answer({ ...other, nonce: unsent.nonce }, sign({ ...other, nonce: unsent.nonce }, 'site-dc1', siteAgent)),
        await answer(misplaced, sign(misplaced, 'site-dc1', siteAgent)),
        await js.publish('bc.site.dc1.res.n1.only-an-id', sign(other, 'site-dc1', siteAgent)).catch((err: Error) => err.message.split(':')[0]),
      ]).toEqual(['RESULT_REFUSED', 'RESULT_REFUSED', 'RESULT_COMMAND_UNKNOWN', 'RESULT_COMMAND_UNKNOWN', 'RESULT_COMMAND_UNKNOWN', 'RESULT_SUBJECT_INVALID']);
      expect((await jsm.streams.info(Streams.agentResults.name)).state.messages).toBe(1);
    } finally {
      await intake.stop();
      await nc.close();
    }
    // The first refusal of the window was a log line; the others are one count, appended when the intake stopped.
    expect(counts).toHaveLength(1);
    expect(counts[0]).toMatchObject({
      refused: 6,
      sources: [
        { source: 'dc1/n1', refused: 5 },
        { source: 'dc1/n2', refused: 1 },
      ],
    });
  });
});
