import { describe, expect, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import type { NodeOperation } from '../../schemas/metal/workflow.ts';
import { completeCancel } from '../../services/metal/node/completeCancel.ts';
import { completeOperation } from '../../services/metal/node/completeOperation.ts';
import { workflowIdFor } from '../../services/metal/node/lifecycle.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { remediateNode } from '../../services/workflow/remediate.ts';
import { retryNode } from '../../services/metal/node/retry.ts';
import { pluginRegistryAggregate } from '../../services/plugins/registry/registry.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(nodeAggregate);
const n = 'n1';
const wf = workflowIdFor(n, 'cmd-00000001');
const enrolled: MetalEvent = {
  type: 'NodeEnrolled',
  data: { nodeId: n, siteId: 'dc1', bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
};
const requested = (operation: NodeOperation, workflowId: string, inputs: Record<string, unknown> = {}): MetalEvent => ({
  type: 'NodeOperationRequested',
  data: { nodeId: n, siteId: 'dc1', operation, workflowId, inputs },
});
const completed = (operation: NodeOperation, workflowId: string): MetalEvent => ({
  type: 'NodeOperationCompleted',
  data: { nodeId: n, operation, workflowId },
});
const ready = [enrolled, requested('inspect', 'wf-00000000000a'), completed('inspect', 'wf-00000000000a')];
const deployed = [...ready, requested('deploy', 'wf-00000000000b'), completed('deploy', 'wf-00000000000b')];
const registry = { dependencies: pluginRegistryAggregate.initialState };
const inputsFrom = (returnTo: string, allowDestructive = false) => ({
  profile: 'bmc-check',
  remediateReturnTo: returnTo,
  remediateAllowDestructive: allowDestructive,
});

describe('metal.remediate decider', () => {
  it('given a deployed node, when remediated, then the operation records where it returns, and completing it returns there', () => {
    given(deployed)
      .when(remediateNode, { nodeId: n, profile: 'bmc-check' }, registry)
      .then([{ type: 'NodeOperationRequested', data: { nodeId: n, siteId: 'dc1', operation: 'remediate', workflowId: wf, inputs: inputsFrom('deployed') } }]);
    const remediating = given([...deployed, requested('remediate', wf, inputsFrom('deployed'))]);
    expect(remediating.state).toMatchObject({ state: 'remediating' });
    const done = remediating
      .when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: { exists: false }, unverifiedReleaseAllowed: false } })
      .then([{ type: 'NodeOperationCompleted', data: { nodeId: n, operation: 'remediate', workflowId: wf, state: 'deployed' } }]);
    expect(given([...deployed, requested('remediate', wf, inputsFrom('deployed')), ...done]).state).toMatchObject({ state: 'deployed', current: null });
  });

  it('given a ready node, when remediated and completed, then it is ready again', () => {
    const events = given(ready)
      .when(remediateNode, { nodeId: n, profile: 'bmc-check' }, registry)
      .then((e) => expect(e).toHaveLength(1));
    const done = given([...ready, ...events])
      .when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: { exists: false }, unverifiedReleaseAllowed: false } })
      .then((e) => expect(e[0]).toMatchObject({ data: { state: 'ready' } }));
    expect(given([...ready, ...events, ...done]).state).toMatchObject({ state: 'ready', current: null, owner: null });
  });

  it('refuses a destructive profile unless destruction is allowed, an unknown profile, and a node not at rest', () => {
    given(ready).when(remediateNode, { nodeId: n, profile: 'power-cycle' }, registry).thenRejects('NOT_PERMITTED');
    given(deployed).when(remediateNode, { nodeId: n, profile: 'release' }, registry).thenRejects('NOT_PERMITTED');
    given(ready)
      .when(remediateNode, { nodeId: n, profile: 'power-cycle', allowDestructive: true }, registry)
      .then((e) => expect(e[0]).toMatchObject({ data: { inputs: { profile: 'power-cycle', remediateAllowDestructive: true } } }));
    given(ready).when(remediateNode, { nodeId: n, profile: 'nope' }, registry).thenRejects('PRECONDITION_FAILED');
    given([enrolled]).when(remediateNode, { nodeId: n, profile: 'bmc-check' }, registry).thenRejects('ILLEGAL_TRANSITION');
    given([...ready, requested('rescue', wf)])
      .when(remediateNode, { nodeId: n, profile: 'bmc-check' }, registry)
      .thenRejects('ILLEGAL_TRANSITION');
    given([]).when(remediateNode, { nodeId: n, profile: 'bmc-check' }, registry).thenRejects('NOT_FOUND');
  });

  it('given a remediation under way, when the same remediation is asked again, then nothing new happens', () => {
    given([...deployed, requested('remediate', wf, inputsFrom('deployed'))])
      .when(remediateNode, { nodeId: n, profile: 'bmc-check' }, registry)
      .then([]);
  });

  it('given a failed remediation, when retried, then it still returns where the first one started', () => {
    const failed: MetalEvent = {
      type: 'NodeOperationFailed',
      data: { nodeId: n, operation: 'remediate', workflowId: wf, reason: 'x', failedStep: null, maintenance: false },
    };
    const retried = given([...deployed, requested('remediate', wf, inputsFrom('deployed')), failed])
      .when(retryNode, { nodeId: n }, { commandId: 'cmd-00000002' })
      .then((e) => expect(e[0]).toMatchObject({ data: { operation: 'remediate', inputs: { remediateReturnTo: 'deployed' } } }));
    const wf2 = (retried[0]!.data as { workflowId: string }).workflowId;
    given([...deployed, requested('remediate', wf, inputsFrom('deployed')), failed, ...retried])
      .when(completeOperation, { nodeId: n, workflowId: wf2 }, { dependencies: { workflow: { exists: false }, unverifiedReleaseAllowed: false } })
      .then((e) => expect(e[0]).toMatchObject({ data: { state: 'deployed' } }));
  });

  it('given a remediation cancelled before any step, then the node goes back where it was', () => {
    const cancelling: MetalEvent = { type: 'NodeCancelRequested', data: { nodeId: n, operation: 'remediate', workflowId: wf, reason: 'no' } };
    given([...deployed, requested('remediate', wf, inputsFrom('deployed')), cancelling])
      .when(completeCancel, { nodeId: n, workflowId: wf }, { dependencies: { workflow: { exists: false, cancelled: true } } })
      .then((e) => expect(e[0]).toMatchObject({ type: 'NodeOperationCancelled', data: { state: 'deployed' } }));
  });
});
