import { describe, expect, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import { cancelNode } from '../../services/metal/node/cancel.ts';
import { completeCancel } from '../../services/metal/node/completeCancel.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { builtinProfiles } from '../../services/metal/profiles/builtin.ts';
import { cancelWorkflow } from '../../services/workflow/workflow/cancel.ts';
import { bootBefore } from '../../services/workflow/workflow/rewind.ts';
import { startWorkflow } from '../../services/workflow/workflow/start.ts';
import { completeStep } from '../../services/workflow/workflow/completeStep.ts';
import { failStep } from '../../services/workflow/workflow/failStep.ts';
import { startStep } from '../../services/workflow/workflow/startStep.ts';
import { workflowAggregate, type WorkflowState } from '../../services/workflow/workflow/workflow.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { deciderSpec } from './spec.ts';

const now = '2026-12-02T12:00:00.000Z';
const wf = 'wf-0123456789ab';
const given = deciderSpec(workflowAggregate);
const steps = resolveSteps(builtinProfiles.deploy, { imageUrl: 'https://i/x.raw', imageSha256: 'a'.repeat(64) });
const ids = (stepIndex: number, attempt = 1) => ({ workflowId: wf, stepIndex, attempt });
const workflowStarted: WorkflowEvent = {
  type: 'WorkflowStarted',
  data: { workflowId: wf, nodeId: 'n1', siteId: 'dc1', operation: 'deploy', profile: { id: 'deploy', version: 2 }, steps, startedAt: now },
};
const scheduled = (i: number, attempt = 1): WorkflowEvent => ({ type: 'StepScheduled', data: { ...ids(i, attempt), stepId: steps[i]!.id } });
/** The nonce every attempt of these tests starts with. */
const nonce = 'bm9uY2Utb2YtdGhlLWF0dGVtcHQ';
const begin = (stepIndex: number, attempt = 1) => ({ ...ids(stepIndex, attempt), nonce });
const stepStarted = (i: number, attempt = 1): WorkflowEvent => ({
  type: 'StepStarted',
  data: { ...ids(i, attempt), stepId: steps[i]!.id, startedAt: now, nonce },
});
const stepSucceeded = (i: number, attempt = 1): WorkflowEvent => ({ type: 'StepSucceeded', data: { ...ids(i, attempt), stepId: steps[i]!.id, output: {} } });
/** Steps 0..i-1 done, step i scheduled. */
const upTo = (i: number): WorkflowEvent[] => [
  workflowStarted,
  scheduled(0),
  ...Array.from({ length: i }, (_, k) => [stepStarted(k), stepSucceeded(k), scheduled(k + 1)]).flat(),
];
const writing = [...upTo(3), stepStarted(3)];
const lost = (attempt = 1) => ({ ...ids(3, attempt), code: 'AGENT_LOST', message: 'no heartbeat for 45 s', retryable: true });
const fold = (events: readonly WorkflowEvent[]) => events.reduce<WorkflowState>((s, e) => workflowAggregate.evolve(s, e), workflowAggregate.initialState);

describe('restart from the boot when the agent is lost', () => {
  it('finds the boot of the ramdisk a node step talks to: the site steps before its wait.agentJoined', () => {
    expect(bootBefore(steps, 3)).toBe(0);
    expect(bootBefore(steps, 4)).toBe(0);
    // Site steps and the wait itself depend on no boot of theirs.
    expect(bootBefore(steps, 5)).toBeUndefined();
    expect(bootBefore(steps, 2)).toBeUndefined();
    const installedHost = resolveSteps({ ...builtinProfiles.deploy, steps: [{ id: 'userdata.write', runsOn: 'node' }] }, {});
    expect(bootBefore(installedHost, 0)).toBeUndefined();
  });

  it('a ramdisk wait that lost its boot (BOOT_LOST) resets the machine again, three boots in all, then fails the workflow', () => {
    const bootLost = (attempt: number) => ({ ...ids(2, attempt), code: 'BOOT_LOST', message: 'no script fetched', retryable: true });
    let events: WorkflowEvent[] = [...upTo(2), stepStarted(2)];
    for (const attempt of [1, 2]) {
      const failed = given(events)
        .when(failStep, bootLost(attempt))
        .then((e) => expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowRewound', 'StepScheduled']));
      expect(failed[1]!.data).toMatchObject({ fromStepIndex: 2, toStepIndex: 0, code: 'BOOT_LOST' });
      const next = attempt + 1;
      events = [...events, ...failed, stepStarted(0, next), stepSucceeded(0, next), scheduled(1, next), stepStarted(1, next), stepSucceeded(1, next)];
      events = [...events, scheduled(2, next), stepStarted(2, next)];
    }
    given(events)
      .when(failStep, bootLost(3))
      .then((e) => {
        expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowFailed']);
        expect(e[1]!.data).toMatchObject({ failedStep: 'wait.agentJoined', code: 'BOOT_LOST' });
      });
  });

  it('failStep AGENT_LOST with attempts left schedules the boot again with its next attempt number', () => {
    const events = given(writing)
      .when(failStep, lost())
      .then((e) => expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowRewound', 'StepScheduled']));
    expect(events[0]).toMatchObject({ data: { retryable: true, code: 'AGENT_LOST' } });
    expect(events[1]).toEqual({ type: 'WorkflowRewound', data: { workflowId: wf, fromStepIndex: 3, toStepIndex: 0, code: 'AGENT_LOST', at: now } });
    expect(events[2]).toEqual(scheduled(0, 2));
    const state = fold([...writing, ...events]);
    expect(state).toMatchObject({ status: 'running', restartedAt: now });
    if (!state.exists) throw new Error('no workflow');
    expect(state.progress.map((p) => [p.status, p.attempt])).toEqual([
      ['scheduled', 1],
      ['pending', 1],
      ['pending', 1],
      ['pending', 1],
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
  });

  it('runs the boot with new attempt numbers, rewinds a wait.agentJoined that lost its boot, and counts the lost step on', () => {
    const rewound = [
      ...writing,
      ...given(writing)
        .when(failStep, lost())
        .then(() => undefined),
    ];
    given(rewound).when(startStep, begin(0, 1)).thenRejects('ILLEGAL_TRANSITION');
    given(rewound)
      .when(startStep, begin(0, 2))
      .then([stepStarted(0, 2)]);
    given([...rewound, stepStarted(0, 2)])
      .when(completeStep, { ...ids(0, 2), output: {} })
      .then([stepSucceeded(0, 2), scheduled(1, 2)]);
    const booted = [
      ...rewound,
      stepStarted(0, 2),
      stepSucceeded(0, 2),
      scheduled(1, 2),
      stepStarted(1, 2),
      stepSucceeded(1, 2),
      scheduled(2, 2),
      stepStarted(2, 2),
    ];
    // A ramdisk wait that times out after the restart has lost its boot too: it restarts from the boot again (issue 31, 11).
    given(booted)
      .when(failStep, { ...ids(2, 2), code: 'STEP_TIMEOUT', message: 'x', retryable: true })
      .then((e) => {
        expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowRewound', 'StepScheduled']);
        expect(e[1]!.data).toMatchObject({ fromStepIndex: 2, toStepIndex: 0, code: 'STEP_TIMEOUT' });
      });
    const writingAgain = [...booted, stepSucceeded(2, 2), scheduled(3, 2), stepStarted(3, 2)];
    given(writingAgain)
      .when(failStep, lost(2))
      .then((e) => expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowRewound', 'StepScheduled']));
  });

  it('fails the workflow with AGENT_LOST once the lost step has used its attempts', () => {
    const third = [...writing.slice(0, -1), stepStarted(3, 3)];
    given(third)
      .when(failStep, lost(3))
      .then((e) =>
        expect(e).toMatchObject([
          { type: 'StepFailed', data: { retryable: false } },
          { type: 'WorkflowFailed', data: { code: 'AGENT_LOST', failedStep: 'image.write' } },
        ]),
      );
  });
});

describe('workflow.cancel', () => {
  const cancel = { workflowId: wf, nodeId: 'n1', reason: 'wrong image' };

  it('before the workflow started: it never will', () => {
    const events = given([])
      .when(cancelWorkflow, cancel)
      .then([{ type: 'WorkflowCancelled', data: { workflowId: wf, nodeId: 'n1', reason: 'wrong image', stepIndex: null, started: false } }]);
    given(events).when(cancelWorkflow, cancel).then([]);
    given(events).when(startWorkflow, { workflowId: wf, nodeId: 'n1', siteId: 'dc1', operation: 'deploy', inputs: {} }).then([]);
  });

  it('with no destructive step running, ends the workflow at once; nothing new starts after it', () => {
    const waiting = [...upTo(2), stepStarted(2)];
    const events = given(waiting)
      .when(cancelWorkflow, cancel)
      .then([{ type: 'WorkflowCancelled', data: { workflowId: wf, nodeId: 'n1', reason: 'wrong image', stepIndex: 2, started: true } }]);
    given([...waiting, ...events])
      .when(completeStep, { ...ids(2), output: {} })
      .thenRejects('ILLEGAL_TRANSITION');
    given([...upTo(3), ...events])
      .when(startStep, begin(3))
      .thenRejects('ILLEGAL_TRANSITION');
    given([...waiting, ...events])
      .when(cancelWorkflow, cancel)
      .then([]);
  });

  it('with a destructive step running, waits for its outcome and then ends the workflow instead of going on', () => {
    const requested = given(writing)
      .when(cancelWorkflow, cancel)
      .then([{ type: 'WorkflowCancelRequested', data: { workflowId: wf, reason: 'wrong image', waitingForStep: 3 } }]);
    const cancelling = [...writing, ...requested];
    given(cancelling).when(cancelWorkflow, cancel).then([]);
    // The running attempt may still be resumed after an executor crash; nothing else starts.
    given(cancelling).when(startStep, begin(3)).then([]);
    given(cancelling).when(startStep, begin(3, 2)).thenRejects('ILLEGAL_TRANSITION');
    given(cancelling)
      .when(completeStep, { ...ids(3), output: {} })
      .then([stepSucceeded(3), { type: 'WorkflowCancelled', data: { workflowId: wf, nodeId: 'n1', reason: 'wrong image', stepIndex: 4, started: true } }]);
    // A failure is not retried, nor restarted from the boot.
    given(cancelling)
      .when(failStep, lost())
      .then((e) =>
        expect(e).toMatchObject([
          { type: 'StepFailed', data: { retryable: false } },
          { type: 'WorkflowCancelled', data: { stepIndex: 3 } },
        ]),
      );
  });

  it('comes too late while the last step runs: the operation completes', () => {
    const last = [...upTo(6), stepStarted(6)];
    const requested = given(last)
      .when(cancelWorkflow, cancel)
      .then(() => undefined);
    given([...last, ...requested])
      .when(completeStep, { ...ids(6), output: {} })
      .then((e) => expect(e.map((x) => x.type)).toEqual(['StepSucceeded', 'WorkflowCompleted']));
  });
});

describe('metal.cancel and metal.completeCancel', () => {
  const givenNode = deciderSpec(nodeAggregate);
  const n = 'n1';
  const enrolled: MetalEvent = {
    type: 'NodeEnrolled',
    data: { nodeId: n, siteId: 'dc1', bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
  };
  const requested = (operation: 'inspect' | 'deploy' | 'release' | 'rescue', workflowId: string, tenantId?: string): MetalEvent => ({
    type: 'NodeOperationRequested',
    data: { nodeId: n, siteId: 'dc1', operation, workflowId, inputs: {}, ...(tenantId ? { tenantId } : {}) },
  });
  const completed = (operation: 'inspect' | 'deploy', workflowId: string): MetalEvent => ({
    type: 'NodeOperationCompleted',
    data: { nodeId: n, operation, workflowId },
  });
  const ready = [enrolled, requested('inspect', 'wf-00000000000a'), completed('inspect', 'wf-00000000000a')];
  const deploying = [...ready, requested('deploy', wf, 'acme')];
  const cancelRequested: MetalEvent = { type: 'NodeCancelRequested', data: { nodeId: n, operation: 'deploy', workflowId: wf, reason: 'wrong image' } };
  const cancelledWorkflow = (started: boolean) =>
    fold(
      started
        ? [...writing, { type: 'WorkflowCancelled', data: { workflowId: wf, nodeId: n, reason: 'wrong image', stepIndex: 3, started } }]
        : [{ type: 'WorkflowCancelled', data: { workflowId: wf, nodeId: n, reason: 'wrong image', stepIndex: null, started } }],
    );

  it('asks the running operation to stop, once; a node at rest has nothing to cancel', () => {
    givenNode(deploying).when(cancelNode, { nodeId: n, reason: 'wrong image' }).then([cancelRequested]);
    givenNode([...deploying, cancelRequested])
      .when(cancelNode, { nodeId: n })
      .then([]);
    givenNode(ready).when(cancelNode, { nodeId: n }).thenRejects('ILLEGAL_TRANSITION');
    givenNode([]).when(cancelNode, { nodeId: n }).thenRejects('NOT_FOUND');
  });

  it('ends a deploy that touched the machine failed and in maintenance, with the reason and the step it stopped at', () => {
    const events = givenNode([...deploying, cancelRequested])
      .when(completeCancel, { nodeId: n, workflowId: wf }, { dependencies: { workflow: cancelledWorkflow(true) } })
      .then([
        {
          type: 'NodeOperationFailed',
          data: { nodeId: n, operation: 'deploy', workflowId: wf, reason: 'cancelled: wrong image', failedStep: 'image.write', maintenance: true },
        },
      ]);
    const state = givenNode([...deploying, cancelRequested, ...events]).state;
    expect(state).toMatchObject({ state: 'failed', maintenance: true, current: null, failed: { operation: 'deploy', reason: 'cancelled: wrong image' } });
    givenNode([...deploying, cancelRequested, ...events])
      .when(completeCancel, { nodeId: n, workflowId: wf }, { dependencies: { workflow: cancelledWorkflow(true) } })
      .then([]);
  });

  it('puts a node whose operation never started back where it was, and its tenant lets go of a ready node', () => {
    const events = givenNode([...deploying, cancelRequested])
      .when(completeCancel, { nodeId: n, workflowId: wf }, { dependencies: { workflow: cancelledWorkflow(false) } })
      .then([{ type: 'NodeOperationCancelled', data: { nodeId: n, operation: 'deploy', workflowId: wf, reason: 'cancelled: wrong image', state: 'ready' } }]);
    expect(givenNode([...deploying, cancelRequested, ...events]).state).toMatchObject({ state: 'ready', current: null, owner: null, maintenance: false });
  });

  it('ends a cancelled inspection failed (metal.retry inspects again), without maintenance', () => {
    const inspecting = [enrolled, requested('inspect', wf)];
    const inspectCancel: MetalEvent = { ...cancelRequested, data: { ...cancelRequested.data, operation: 'inspect' } };
    givenNode([...inspecting, inspectCancel])
      .when(completeCancel, { nodeId: n, workflowId: wf }, { dependencies: { workflow: cancelledWorkflow(false) } })
      .then((e) => expect(e).toMatchObject([{ type: 'NodeOperationFailed', data: { operation: 'inspect', maintenance: false } }]));
  });

  it('refuses to end an operation whose workflow is not cancelled', () => {
    givenNode([...deploying, cancelRequested])
      .when(completeCancel, { nodeId: n, workflowId: wf }, { dependencies: { workflow: fold(writing) } })
      .thenRejects('ILLEGAL_TRANSITION');
  });
});
