import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import { nodeStates } from '../../schemas/metal/nodeState.ts';
import { erasingOperations } from '../../schemas/metal/workflow.ts';
import type { CommandDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { nodeAggregate, type NodeAggregateState } from '../../services/metal/node/node.ts';
import { cancelNode } from '../../services/metal/node/cancel.ts';
import { completeCancel } from '../../services/metal/node/completeCancel.ts';
import { deployNode } from '../../services/metal/node/deploy.ts';
import { rescueNode } from '../../services/metal/node/rescue.ts';
import { retireNode } from '../../services/metal/node/retire.ts';
import { retryNode } from '../../services/metal/node/retry.ts';
import { startInspection } from '../../services/metal/node/startInspection.ts';
import { undeployNode } from '../../services/metal/node/undeploy.ts';
import { unrescueNode } from '../../services/metal/node/unrescue.ts';
import { completeOperation } from '../../services/metal/node/completeOperation.ts';
import { failOperation } from '../../services/metal/node/failOperation.ts';
import { markWiping } from '../../services/metal/node/markWiping.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { deployPayload } from './engineFixture.ts';

const n = 'n1';
const enrolled: MetalEvent = {
  type: 'NodeEnrolled',
  data: { nodeId: n, siteId: 'dc1', bmc: { address: 'https://b', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
};

/** An operator verb, or the engine reporting on the node's current workflow (a wipe attested or not). */
type Action =
  { kind: 'verb'; verb: string } | { kind: 'complete'; attested: boolean } | { kind: 'fail' } | { kind: 'wiping' } | { kind: 'cancelled'; started: boolean };
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.constantFrom('deploy', 'undeploy', 'rescue', 'unrescue', 'retire', 'retry', 'inspect', 'cancel').map((verb) => ({ kind: 'verb' as const, verb })),
  fc.boolean().map((attested) => ({ kind: 'complete' as const, attested })),
  fc.constant({ kind: 'fail' as const }),
  fc.constant({ kind: 'wiping' as const }),
  fc.boolean().map((started) => ({ kind: 'cancelled' as const, started })),
);

const verbs: Record<string, [CommandDefinition, unknown]> = {
  deploy: [deployNode, deployPayload(n)],
  undeploy: [undeployNode, { nodeId: n }],
  rescue: [rescueNode, { nodeId: n }],
  unrescue: [unrescueNode, { nodeId: n }],
  retire: [retireNode, { nodeId: n }],
  retry: [retryNode, { nodeId: n }],
  inspect: [startInspection, { nodeId: n }],
  cancel: [cancelNode, { nodeId: n }],
};

function commandFor(action: Action, state: NodeAggregateState): [CommandDefinition, unknown, unknown] {
  const workflowId = (state.exists && state.current?.workflowId) || 'wf-000000000000';
  const workflow = {
    exists: true,
    steps: [{ id: 'disk.wipe', attests: 'wipe' }],
    progress: [{ status: 'succeeded', output: { attested: action.kind === 'complete' && action.attested } }],
  };
  switch (action.kind) {
    case 'verb':
      return [...verbs[action.verb]!, { inputs: {} }];
    case 'complete':
      return [completeOperation, { nodeId: n, workflowId }, { workflow }];
    case 'fail':
      return [failOperation, { nodeId: n, workflowId, reason: 'x', failedStep: 's' }, undefined];
    case 'wiping':
      return [markWiping, { nodeId: n, workflowId }, undefined];
    case 'cancelled': {
      const cancelled = {
        exists: true,
        status: 'cancelled',
        steps: [{ id: 'disk.wipe', attests: 'wipe' }],
        progress: [{ status: 'failed', attempt: action.started ? 1 : 0 }],
      };
      return [completeCancel, { nodeId: n, workflowId }, { workflow: cancelled }];
    }
  }
}

describe('node lifecycle under any sequence of verbs and workflow outcomes', () => {
  test.prop([fc.array(actionArb, { maxLength: 40 })], { numRuns: 300 })(
    'stays in a known state, refuses only with ILLEGAL_TRANSITION, and leaves a release for ready (or a retirement for retired) only with an attested wipe',
    (actions) => {
      let state = nodeAggregate.evolve(nodeAggregate.initialState, enrolled);
      actions.forEach((action, i) => {
        const [command, payload, dependencies] = commandFor(action, state);
        let events: readonly MetalEvent[];
        try {
          events = command.decide(command.schema.parse(payload), state, {
            commandId: `cmd-${String(i).padStart(8, '0')}`,
            actor: 't',
            now: 'now',
            dependencies,
          }) as MetalEvent[];
        } catch (err) {
          expect(err).toBeInstanceOf(PlatformError);
          expect((err as PlatformError).code).toBe('ILLEGAL_TRANSITION');
          return;
        }
        const before = state;
        for (const e of events) state = nodeAggregate.evolve(state, e);
        if (!state.exists || !before.exists) throw new Error('node vanished');
        expect(nodeStates).toContain(state.state);
        if ((before.state === 'releasing' || before.state === 'wiping') && state.state === 'ready')
          expect(action).toEqual({ kind: 'complete', attested: true });
        if (before.state === 'retiring' && state.state === 'retired') expect(action).toEqual({ kind: 'complete', attested: true });
        if (erasingOperations.has(before.current?.operation ?? 'inspect') && state.state === 'failed') expect(state.maintenance).toBe(true);
        // A cancelled operation that touched the machine never ends anywhere but `failed`; a deploy or release in maintenance.
        if (action.kind === 'cancelled' && action.started && events.length > 0) {
          expect(state.state).toBe('failed');
          if (before.current?.operation === 'deploy' || before.current?.operation === 'release') expect(state.maintenance).toBe(true);
        }
        // The same command again changes nothing more (idempotent) or is refused.
        try {
          const again = command.decide(command.schema.parse(payload), state, { commandId: 'cmd-again-0', actor: 't', now: 'now', dependencies });
          if (action.kind !== 'verb' || ['unrescue', 'retry'].includes(action.verb) === false) expect(again).toEqual([]);
        } catch (err) {
          expect((err as PlatformError).code).toBe('ILLEGAL_TRANSITION');
        }
      });
    },
  );
});
