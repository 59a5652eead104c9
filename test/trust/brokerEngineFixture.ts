import { connect } from '@nats-io/transport-node';
import { createLogger } from '../../services/platform/logger.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { allCommands, busCommands } from '../../services/api/commandCatalog.ts';
import { nodeAggregate, type NodeAggregateState } from '../../services/metal/node/node.ts';
import { loadMasterKey } from '../../services/secrets/masterKey.ts';
import { startGrantService } from '../../services/secrets/grantService.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { brokerConnectOptions } from '../../services/platform/nats/brokerConnection.ts';
import { issueJoinCredentials, issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { mintJoinToken } from '../../services/trust/joinToken/mint.ts';
import { loadWorkflowConfig } from '../../services/workflow/config.ts';
import { WorkflowExecutor } from '../../services/workflow/executor.ts';
import { WorkflowOrchestrator } from '../../services/processes/orchestrator/orchestrator.ts';
import { loadOrCreateIdentity, type AgentIdentity } from '../../daemon/agent/identity.ts';
import { connectJoinedAgent, type JoinedAgent } from '../../daemon/agent/joinedConnection.ts';
import type { JoinRole } from '../../schemas/trust/joinTokens.ts';
import type { RefusalTallyOptions } from '../../services/platform/refusalTally.ts';
import { tempDir } from '../support/natsServer.ts';
import { startTestBroker } from './brokerFixture.ts';

/**
 * The control plane in-process on a nats-server in operator mode, as `npm start` runs it by default (`BC_NATS_AUTH=operator`):
 * every service on control-plane credentials, the `commands` service without `agent.register`, the join service
 * signing agents' JWTs, the registration, boot-token and grant services, the orchestrator and one executor. Agents
 * come in only as real ones do: a token, the public join credential, then their own JWT.
 */
export async function startBrokerEngine(
  options: {
    /** How the join and registration services and the result intake count refusals (default: theirs). */
    refusals?: RefusalTallyOptions;
    /** `BC_AGENT_RESULTS_MAX_BYTES` (default 256 MiB). */
    agentResultsMaxBytes?: number;
    /** The account's JetStream storage limit (default none). */
    jetStreamMaxBytes?: number;
  } = {},
) {
  const broker = await startTestBroker(options.jetStreamMaxBytes ? { jetStream: { diskStorage: options.jetStreamMaxBytes } } : {});
  const dir = tempDir('bc-broker-engine-');
  const config = loadConfig(
    {},
    {
      dataDir: dir.path,
      natsUrl: broker.server.url,
      logLevel: 'silent',
      ...(options.agentResultsMaxBytes ? { agentResultsMaxBytes: options.agentResultsMaxBytes } : {}),
    },
  );
  const log = createLogger('broker-engine', process.env.BC_TEST_LOG ?? 'silent');
  const service = await issueServiceCredentials(broker.material, 'test-control-plane');
  const nc = await connect({ servers: broker.server.url, name: 'control-plane', ...brokerConnectOptions(service) });
  await ensureStreams(nc, config);
  const store = await openEventStore(nc, config);
  const bus = new CommandBus(store, allCommands, { retries: config.commandRetries });
  const masterKey = loadMasterKey(config);
  const workflowConfig = loadWorkflowConfig({}, { workAckWaitMs: 1_500, resultRecheckMs: 500 });
  const responder = serveCommands(nc, new CommandBus(store, busCommands, { retries: config.commandRetries }), log);
  const refusals = options.refusals ? { refusals: options.refusals } : {};
  const joins = startJoinService(nc, store, log, { broker: { material: broker.material }, ...refusals });
  const bootTokens = startBootTokenService(nc, store, log);
  const registrations = startRegistrationService(nc, store, log, refusals);
  const grants = startGrantService(nc, store, masterKey, log);
  const orchestrator = new WorkflowOrchestrator(nc, store, workflowConfig, log);
  await orchestrator.start();
  const executor = new WorkflowExecutor(nc, store, workflowConfig, log, { masterKey, ...(options.refusals ? { resultIntake: refusals } : {}) });
  await executor.start();
  const joinCreds = (await issueJoinCredentials(broker.material)).creds;
  const agents: JoinedAgent[] = [];
  const send = (name: string, payload: unknown, commandId: string) => bus.execute({ name, payload, commandId, actor: 'test' });
  let agentDirs = 0;

  return {
    broker,
    nc,
    store,
    bus,
    log,
    config,
    masterKey,
    joinCreds,
    dataDir: dir.path,
    send,
    /**
     * Joins an agent the way `bcd` does under broker auth (a token minted for its role and scope, the public join
     * credential, then its own JWT). Returns its connection, identity and NATS user key.
     */
    async joinAgent(role: JoinRole, siteId: string, nodeId?: string, identity?: AgentIdentity): Promise<JoinedAgent & { identity: AgentIdentity }> {
      const { token } = await mintJoinToken(send, { role, siteId, ...(nodeId ? { nodeId } : {}), ttlSeconds: 600 });
      const own = identity ?? loadOrCreateIdentity(`${dir.path}/agents/${agentDirs++}`);
      const agent = await connectJoinedAgent({
        natsUrl: broker.server.url,
        name: `test-${role}-${siteId}`,
        role,
        token,
        identity: own,
        siteId,
        ...(nodeId ? { nodeId } : {}),
        joinCreds,
        log,
      });
      agents.push(agent);
      return { ...agent, identity: own };
    },
    nodeState: async (nodeId: string) => (await bus.repository.load(nodeAggregate, nodeId)).state,
    async waitForNode(nodeId: string, predicate: (s: NodeAggregateState) => boolean, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = (await bus.repository.load(nodeAggregate, nodeId)).state;
        if (predicate(s)) return s;
        if (Date.now() > deadline) throw new Error(`node ${nodeId} did not reach the expected state; last: ${JSON.stringify(s)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async [Symbol.asyncDispose]() {
      await Promise.allSettled(agents.map((a) => a.nc.close()));
      await executor.stop();
      await orchestrator.stop();
      responder.unsubscribe();
      await Promise.all([joins.stop(), bootTokens.stop(), registrations.stop(), grants.stop()]);
      await nc.close();
      await broker[Symbol.asyncDispose]();
      dir[Symbol.dispose]();
    },
  };
}
