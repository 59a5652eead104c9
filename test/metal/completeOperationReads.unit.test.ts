import { describe, expect, test } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import { workflowRef } from '../../schemas/metal/workflowState.ts';
import type { AggregateLoader } from '../../services/platform/commands/commandDefinition.ts';
import { completeOperation } from '../../services/metal/node/completeOperation.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(nodeAggregate);
const n = 'n1';
const bmc = { address: 'https://10.0.0.1', credentialsRef: 'secret:b' };
const enrolled: MetalEvent = { type: 'NodeEnrolled', data: { nodeId: n, siteId: 'dc1', bmc, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] } };
const requested = (operation: 'inspect' | 'release', workflowId: string): MetalEvent => ({
  type: 'NodeOperationRequested',
  data: { nodeId: n, siteId: 'dc1', operation, workflowId, inputs: {} },
});

/** The loads `completeOperation` asks for when the node (as this process holds it) is `history`. */
async function readsFor(history: readonly MetalEvent[], workflowId: string) {
  const node = history.reduce((s, e) => nodeAggregate.evolve(s, e), nodeAggregate.initialState);
  const reads: { aggregate: unknown; id: string; fresh: boolean }[] = [];
  const load = (async (aggregate: unknown, id: string, options?: { fresh?: boolean }) => {
    reads.push({ aggregate, id, fresh: options?.fresh === true });
    return aggregate === workflowRef ? { exists: false } : node;
  }) as AggregateLoader;
  await completeOperation.dependencies!({ nodeId: n, workflowId }, load);
  return reads.filter((r) => r.aggregate === workflowRef);
}

describe('metal.completeOperation reads its workflow only to judge a wipe', () => {
  test('the end of an inspection reads no workflow', async () => {
    expect(await readsFor([enrolled, requested('inspect', 'wf-00000000000a')], 'wf-00000000000a')).toEqual([]);
  });

  test('the end of a release reads its workflow from the log', async () => {
    expect(await readsFor([enrolled, requested('release', 'wf-00000000000b')], 'wf-00000000000b')).toEqual([
      { aggregate: workflowRef, id: 'wf-00000000000b', fresh: true },
    ]);
  });

  test('a release decided without its workflow (read on a node this process held stale) is refused, to be decided again', () => {
    given([enrolled, requested('release', 'wf-00000000000b')])
      .when(completeOperation, { nodeId: n, workflowId: 'wf-00000000000b' }, { dependencies: { workflow: undefined, unverifiedReleaseAllowed: false } })
      .thenRejects('PRECONDITION_FAILED');
  });
});
