import { setTimeout as sleep } from 'node:timers/promises';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { nodeAggregate, type NodeAggregateState } from '../../services/metal/node/node.ts';
import { loadWorkflowConfig, type WorkflowConfig } from '../../services/workflow/config.ts';
import { WorkflowExecutor } from '../../services/workflow/executor.ts';
import { WorkflowOrchestrator } from '../../services/processes/orchestrator/orchestrator.ts';
import { startBackbone } from '../support/backboneFixture.ts';

/** A backbone with the command responder, the registration service, the orchestrator and one executor running in-process. */
export async function startEngine(overrides: Partial<WorkflowConfig> = {}, executorOptions: ConstructorParameters<typeof WorkflowExecutor>[4] = {}) {
  const env = await startBackbone();
  const config = loadWorkflowConfig({}, { workAckWaitMs: 1_500, resultRecheckMs: 500, ...overrides });
  const responder = serveCommands(env.nc, env.bus, env.log);
  const registrations = startRegistrationService(env.nc, env.store, env.log);
  let orchestrator = new WorkflowOrchestrator(env.nc, env.store, config, env.log);
  await orchestrator.start();
  let executor = new WorkflowExecutor(env.nc, env.store, config, env.log, executorOptions);
  await executor.start();
  const disposeBackbone = env[Symbol.asyncDispose].bind(env);
  const nodeState = async (nodeId: string) => (await env.bus.repository.load(nodeAggregate, nodeId)).state;
  return Object.assign(env, {
    config,
    get orchestrator() {
      return orchestrator;
    },
    /** Stops the orchestrator and starts a fresh one, which folds its model back from the log. */
    async restartOrchestrator() {
      await orchestrator.stop();
      orchestrator = new WorkflowOrchestrator(env.nc, env.store, config, env.log);
      await orchestrator.start();
    },
    get executor() {
      return executor;
    },
    /** Stops the executor as a crash would (work unacked) and starts a fresh one on the same durable. */
    async restartExecutor(downMs = 200) {
      await executor.stop();
      await sleep(downMs);
      executor = new WorkflowExecutor(env.nc, env.store, config, env.log, executorOptions);
      await executor.start();
    },
    nodeState,
    /** Polls the node aggregate until `predicate` holds. */
    async waitForNode(nodeId: string, predicate: (s: NodeAggregateState) => boolean, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = await nodeState(nodeId);
        if (predicate(s)) return s;
        if (Date.now() > deadline) throw new Error(`node ${nodeId} did not reach the expected state; last: ${JSON.stringify(s)}`);
        await sleep(50);
      }
    },
    async [Symbol.asyncDispose]() {
      await executor.stop();
      await orchestrator.stop();
      responder.unsubscribe();
      await registrations.stop();
      await disposeBackbone();
    },
  });
}

export const enrollPayload = (nodeId: string, siteId = 'dc1') => ({
  nodeId,
  siteId,
  // One BMC system per node: enrolment refuses a second node for a system another holds.
  bmc: { address: `https://127.0.0.1:8443/redfish/v1/Systems/${nodeId}`, credentialsRef: 'secret:bmc-1' },
  hardwareProfile: 'default',
  macs: ['52:54:00:aa:bb:01'],
});

export const deployPayload = (nodeId: string) => ({
  nodeId,
  imageUrl: 'https://images.example/ubuntu-24.04.raw',
  imageSha256: 'a'.repeat(64),
  role: 'worker',
  sshKeys: ['ssh-ed25519 AAAA test'],
});
