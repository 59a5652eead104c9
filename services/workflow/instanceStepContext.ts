import type { StepContext, StepInstance, StepNode } from '../../plugins/sdk/defineStep.ts';
import { TerminalError } from '../../plugins/sdk/stepErrors.ts';
import type { InstanceTarget } from '../../schemas/metal/workflow.ts';
import type { InstanceState } from '../../schemas/vps/instanceState.ts';
import type { ClaimedAttempt } from './attemptClaim.ts';
import type { StepContextDeps } from './stepContext.ts';
import { stepFacilities } from './stepFacilities.ts';

/** One claimed attempt of a workflow that runs against a VPS instance. */
export interface InstanceAttemptToRun {
  claim: ClaimedAttempt;
  stepIndex: number;
  target: InstanceTarget;
  instance: InstanceState;
  deadlineMs: number;
  signal: AbortSignal;
  heartbeat: () => void;
}

const noNode = (what: string, instanceId: string) =>
  new TerminalError('UNSUPPORTED', `${what} is a node's, and this workflow runs against instance ${instanceId}`);

/**
 * The context of a step that runs against an instance: the instance instead of a node. What only a node has (its
 * BMC and agents, join tokens for them) fails the step as `UNSUPPORTED`, which no retry changes; blobs and templates
 * work as for a node, keyed by the instance.
 */
export function buildInstanceStepContext(deps: StepContextDeps, run: InstanceAttemptToRun): Omit<StepContext<unknown>, 'input'> {
  const { claim, stepIndex, target } = run;
  const { wf, attempt, attemptId } = claim;
  const { workflowId } = wf;
  const instance: StepInstance = {
    instanceId: target.instanceId,
    tenantId: target.tenantId,
    poolId: wf.siteId,
    providerInstanceId: run.instance.providerInstanceId,
    addresses: run.instance.addresses,
    observed: run.instance.observed,
  };
  const facilities = stepFacilities(deps.mint, deps.blobs, { nodeId: target.instanceId, siteId: wf.siteId }, deps.mintsAs);
  const refuse = (what: string) => () => Promise.reject(noNode(what, target.instanceId));
  return {
    get node(): StepNode {
      throw noNode('ctx.node', target.instanceId);
    },
    instance,
    workflow: { workflowId, operation: wf.operation, stepIndex, attempt, startedAt: wf.startedAt, restartedAt: wf.restartedAt ?? null },
    idempotencyKey: attemptId,
    deadlineMs: run.deadlineMs,
    heartbeat: run.heartbeat,
    signal: run.signal,
    log: deps.log.child({ workflowId, instanceId: target.instanceId, step: wf.steps[stepIndex]!.id, stepIndex, attempt, correlationId: attemptId }),
    ...facilities,
    pki: { mintJoinToken: refuse('a join token') },
    agentEndpoints: deps.agentEndpoints ?? { natsUrl: `nats://${deps.nc.getServer()}` },
    platform: { runAgentCommand: refuse('an agent command'), httpViaSite: refuse('site.httpProxy'), waitForAgent: refuse('an agent') },
  };
}
