import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentCommand, AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { AgentCommandKinds, newNonce } from '../../schemas/agent/agentCommand.ts';
import { verifyAgentResult, type RegisteredAgentKey, type VerifiedAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import type { AgentRegistration } from '../../daemon/agent/registration.ts';
import { keyIdOf } from '../../schemas/agent/agentResultCodec.ts';
import { startTestNats, tempDir } from './natsServer.ts';
import { startResultIntake } from '../../services/agents/resultIntake.ts';
import { startRefusalCounting } from '../../services/trust/refusals/refusalCounting.ts';
import type { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { ResultRejectedError } from '../../plugins/sdk/stepErrors.ts';

export const log = createLogger('test', process.env.BC_TEST_LOG ?? 'silent');

/**
 * A nats-server with the declared streams, and a stand-in for the control plane's registration service: it records
 * registrations and serves them as the key registry `verifyAgentResult` needs.
 */
export async function startAgentBackbone() {
  const nats = await startTestNats();
  const dir = tempDir('bc-daemon-');
  const nc: NatsConnection = await connectNats(nats.url, 'test');
  await ensureStreams(nc, { streamReplicas: 1, duplicateWindowMs: 120_000 });
  const jsm: JetStreamManager = await jetstreamManager(nc);
  const js = jetstream(nc);
  const registrations: AgentRegistration[] = [];
  const sub = nc.subscribe(Subjects.allAgentRegistrations, {
    callback: (_err, msg) => {
      const registration = msg.json<AgentRegistration>();
      registrations.push(registration);
      msg.respond(
        JSON.stringify({
          ok: true,
          result: {
            commandId: `register-${registrations.length}`,
            aggregate: { type: 'agent', id: registration.agentId },
            seq: registrations.length,
            duplicate: false,
            events: [],
          },
        }),
      );
    },
  });
  const keyFor = (agentId: string): RegisteredAgentKey | undefined => {
    const r = registrations.findLast((x) => x.agentId === agentId);
    return r && { keyId: keyIdOf(Buffer.from(r.publicKey, 'base64')), publicKey: r.publicKey, role: r.role, siteId: r.siteId, nodeId: r.nodeId ?? null };
  };
  // The control plane's result intake, verifying against the registrations above as the executor would.
  const intake = await startKeyedResultIntake(nc, keyFor);

  /** Publishes a command like the control plane does; a distinct msgID bypasses JetStream's dedupe (a redelivery). */
  const publish = async (command: AgentCommand, msgID = command.commandId) => {
    const subject =
      AgentCommandKinds[command.kind].runsOn === 'site'
        ? Subjects.siteAgentCommands(command.siteId, command.nodeId)
        : Subjects.nodeAgentCommands(command.siteId, command.nodeId);
    await js.publish(subject, JSON.stringify(command), { msgID });
  };

  /** The stored result for a command, verified as the control plane would. */
  const result = async (command: AgentCommand, timeoutMs = 20_000): Promise<VerifiedAgentResult> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const msg = await jsm.direct.getMessage(Streams.agentResults.name, {
        last_by_subj: Subjects.acceptedAgentResult(command.siteId, command.nodeId, command.commandId, command.nonce),
      });
      if (msg) return verifyAgentResult(msg.data, command, keyFor);
      if (Date.now() > deadline) throw new Error(`no result for ${command.commandId}`);
      await sleep(50);
    }
  };

  /** How many results were stored for a command (dedupe means one). */
  const resultCount = async (command: AgentCommand): Promise<number> => {
    const info = await jsm.streams.info(Streams.agentResults.name, {
      subjects_filter: Subjects.acceptedAgentResult(command.siteId, command.nodeId, command.commandId, command.nonce),
    });
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  };

  return {
    nats,
    nc,
    js,
    jsm,
    dir: dir.path,
    registrations,
    keyFor,
    publish,
    result,
    resultCount,
    async [Symbol.asyncDispose]() {
      sub.unsubscribe();
      await intake.stop();
      await nc.close();
      await nats[Symbol.asyncDispose]();
      dir[Symbol.dispose]();
    },
  };
}

/** The result intake, verifying results against `keyFor` instead of the log's registrations (no refusal is recorded). */
export function startKeyedResultIntake(nc: NatsConnection, keyFor: (agentId: string) => RegisteredAgentKey | undefined) {
  return startResultIntake(nc, {
    verify: async (command, bytes) => {
      const verdict = verifyAgentResult(bytes, command, keyFor);
      if (!verdict.ok) throw new ResultRejectedError(command.commandId, verdict.reason);
      return verdict.result;
    },
    refusals: startRefusalCounting({ execute: async () => undefined } as unknown as CommandBus, 'results', log),
    log,
  });
}

let seq = 0;
/** A command for `kind`, valid for a minute unless overridden. */
export function agentCommand(kind: AgentCommandKind, overrides: Partial<AgentCommand> = {}): AgentCommand {
  seq += 1;
  const now = Date.now();
  return {
    commandId: `wf${process.pid}-${seq}-s0-a1`,
    kind,
    siteId: 'dc1',
    nodeId: 'n1',
    workflowId: `wf${process.pid}-${seq}`,
    stepIndex: 0,
    attempt: 1,
    destructive: AgentCommandKinds[kind].destructive,
    params: {},
    issuedAt: new Date(now).toISOString(),
    notAfter: new Date(now + 60_000).toISOString(),
    nonce: newNonce(),
    ...overrides,
  };
}

/** An HTTP server handing out fixed bytes at /image.raw (the "upstream" an image comes from), counting requests. */
export async function serveBytes(bytes: Uint8Array): Promise<{ url: string; sha256: string; requests: number; close(): Promise<void> } & AsyncDisposable> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    if (req.url !== '/image.raw') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
    res.end(Buffer.from(bytes));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/image.raw`,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    get requests() {
      return state.requests;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
