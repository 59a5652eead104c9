import { describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../schemas/events.ts';
import { idFor } from '../../schemas/ids.ts';
import type { StepDeclarations } from '../../schemas/metal/stepDeclarations.ts';
import { stepAttemptId } from '../../schemas/metal/workflow.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { EngineCommand, Reaction } from '../../services/platform/processManager/processManager.ts';
import { FleetModel } from '../../services/processes/orchestrator/fleetModel.ts';
import { decideOrchestration, evolveFleet } from '../../services/processes/orchestrator/orchestration.ts';
import { processManagerSpec } from '../support/processManagerSpec.ts';

const caps = { deploys: 1, wipes: 1 };
const given = processManagerSpec<PlatformEvent, FleetModel>({
  model: () => new FleetModel(),
  evolve: evolveFleet,
  decide: (input, model) => decideOrchestration(input, model, caps),
});
const event = (type: string, data: Record<string, unknown>) => ({ type: 'event', event: { type, data } as PlatformEvent }) as const;
const requested = (nodeId: string, operation = 'deploy', siteId = 'dc1') =>
  event('NodeOperationRequested', { nodeId, siteId, operation, workflowId: `wf-${nodeId}`, inputs: {} }).event;
const step = (id: string, plugin?: string, declared: StepDeclarations = {}) => ({
  id,
  runsOn: 'site',
  params: {},
  timeoutMs: 1,
  retry: { maxAttempts: 1, backoffMs: 0 },
  destructive: false,
  ...(plugin ? { plugin } : {}),
  ...declared,
});
const started = (nodeId: string, operation: string, steps: unknown[]) =>
  event('WorkflowStarted', {
    workflowId: `wf-${nodeId}`,
    nodeId,
    siteId: 'dc1',
    operation,
    profile: { id: operation, version: 1 },
    startedAt: 't',
    steps,
  }).event;
const start = (nodeId: string, operation = 'deploy') => ({
  key: `wf-${nodeId}`,
  effects: [
    {
      command: 'workflow.start',
      payload: { workflowId: `wf-${nodeId}`, nodeId, siteId: 'dc1', operation, inputs: {} },
      commandId: `wf-${nodeId}-start`,
      refusable: true,
    },
  ],
});

describe('orchestration (decide/evolve of workflow-orchestrator)', () => {
  it("claims an enrolled node's BMC system, then inspects it, with ids derived from the node; a conflict stops before the inspection", () => {
    const enrolled = event('NodeEnrolled', { nodeId: 'n1', siteId: 'dc1', bmc: { address: 'https://10.0.0.9', credentialsRef: 'secret:b' } });
    const decided = given([]).when(enrolled);
    decided.then([
      {
        key: 'node/n1',
        effects: [
          {
            command: 'metal.claimIdentity',
            payload: { nodeId: 'n1', identity: { kind: 'bmcSystem', address: 'https://10.0.0.9' } },
            commandId: idFor('claim-bmc', 'n1'),
            refusable: true,
          },
          { command: 'metal.startInspection', payload: { nodeId: 'n1' }, commandId: idFor('inspect', 'n1') },
        ],
      },
    ]);
    const claim = decided.reactions[0]!.effects[0] as EngineCommand;
    expect(claim.ifRefused?.({ code: 'NODE_IDENTITY_CONFLICT', message: 'node n0 already has it' })).toEqual([]);
    expect(claim.ifRefused?.({ code: 'NOT_FOUND', message: 'x' })).toBeUndefined();
  });

  it('starts requested operations within the site cap and counts a decided start as in flight', () => {
    const spec = given([requested('a')]);
    spec.when(event('NodeOperationRequested', requested('b').data)).then([start('a')]);
    // Nothing more before a workflow ends: `a`'s start is counted although its WorkflowStarted has not come yet.
    spec.when({ type: 'resumed', now: 0 }).then([]);
    expect(spec.model.inFlight('dc1', 'deploys')).toBe(1);
    spec.when(event('NodeOperationFailed', { nodeId: 'a', workflowId: 'wf-a', reason: 'x', failedStep: null })).then([start('b')]);
  });

  it('fails the operation when its start is refused for its profile or its plan, and only then', () => {
    const [reaction] = given([requested('a')]).when({ type: 'resumed', now: 0 }).reactions;
    const startCommand = reaction!.effects[0] as EngineCommand;
    expect(startCommand.ifRefused!({ code: 'PRECONDITION_FAILED', message: 'profile deploy is unknown' })).toEqual([
      {
        kind: 'command',
        name: 'metal.failOperation',
        payload: { nodeId: 'a', workflowId: 'wf-a', reason: 'profile deploy is unknown', failedStep: null },
        commandId: 'wf-a-refused',
      },
    ]);
    expect(startCommand.ifRefused!({ code: 'PLAN_DIGEST_MISMATCH', message: 'not the plan approved' })).toEqual([
      {
        kind: 'command',
        name: 'metal.failOperation',
        payload: { nodeId: 'a', workflowId: 'wf-a', reason: 'not the plan approved', failedStep: null },
        commandId: 'wf-a-refused',
      },
    ]);
    expect(startCommand.ifRefused!({ code: 'ALREADY_EXISTS', message: 'started' })).toBeUndefined();
  });

  it('publishes a scheduled step as work on the control plane, or on its plugin, and marks a wipe', () => {
    const spec = given([started('n1', 'deploy', [step('disk.wipe', undefined, { attests: 'wipe' }), step('acme.image', 'acme')])]);
    spec.when(event('StepScheduled', { workflowId: 'wf-n1', stepIndex: 0, stepId: 'disk.wipe', attempt: 1 })).then([
      {
        key: 'wf-n1',
        effects: [
          {
            kind: 'publish',
            subject: Subjects.work('control-plane', 'disk.wipe'),
            data: { workflowId: 'wf-n1', stepIndex: 0, attempt: 1 },
            msgId: stepAttemptId('wf-n1', 0, 1),
          },
          { command: 'metal.markWiping', payload: { nodeId: 'n1', workflowId: 'wf-n1' }, commandId: 'wf-n1-wiping' },
        ],
      },
    ]);
    spec.when(event('StepScheduled', { workflowId: 'wf-n1', stepIndex: 1, stepId: 'acme.image', attempt: 2 })).then([
      {
        key: 'wf-n1',
        effects: [
          {
            kind: 'publish',
            subject: Subjects.pluginWork('acme', 'acme.image'),
            data: { workflowId: 'wf-n1', stepIndex: 1, attempt: 2 },
            msgId: stepAttemptId('wf-n1', 1, 2),
          },
        ],
      },
    ]);
  });

  it('records the inventory of an inspection and completes the node, then forgets the workflow', () => {
    const inventory = { cpus: 8 };
    const spec = given([
      started('n1', 'inspect', [step('power.on'), step('inventory.read', undefined, { records: 'inventory' })]),
      event('StepSucceeded', { workflowId: 'wf-n1', stepIndex: 1, stepId: 'inventory.read', attempt: 1, output: inventory }).event,
    ]);
    spec.when(event('WorkflowCompleted', { workflowId: 'wf-n1' })).then([
      {
        key: 'wf-n1',
        effects: [
          { command: 'metal.recordInventory', payload: { nodeId: 'n1', workflowId: 'wf-n1', inventory }, commandId: 'wf-n1-inventory' },
          { command: 'metal.completeOperation', payload: { nodeId: 'n1', workflowId: 'wf-n1' }, commandId: 'wf-n1-done' },
        ],
      },
    ]);
    expect(spec.model.workflows.has('wf-n1')).toBe(false);
    // Redelivered after the reaction: nothing is left to answer (the commands went out with their derived ids).
    spec.when(event('WorkflowCompleted', { workflowId: 'wf-n1' })).then([]);
  });

  it('marks a wipe and records an inventory by what the step declares, not by its id', () => {
    const publish = (subject: string, stepIndex: number) => ({
      kind: 'publish',
      subject,
      data: { workflowId: 'wf-n1', stepIndex, attempt: 1 },
      msgId: stepAttemptId('wf-n1', stepIndex, 1),
    });
    const erase = step('acme.secureErase', 'acme', { attests: 'wipe' });
    const spec = given([started('n1', 'release', [erase, step('disk.wipe')])]);
    spec.when(event('StepScheduled', { workflowId: 'wf-n1', stepIndex: 0, stepId: 'acme.secureErase', attempt: 1 })).then([
      {
        key: 'wf-n1',
        effects: [
          publish(Subjects.pluginWork('acme', 'acme.secureErase'), 0),
          { command: 'metal.markWiping', payload: { nodeId: 'n1', workflowId: 'wf-n1' }, commandId: 'wf-n1-wiping' },
        ],
      },
    ]);
    // The id alone means nothing: a frozen step without the declaration is an ordinary step.
    spec
      .when(event('StepScheduled', { workflowId: 'wf-n1', stepIndex: 1, stepId: 'disk.wipe', attempt: 1 }))
      .then([{ key: 'wf-n1', effects: [publish(Subjects.work('control-plane', 'disk.wipe'), 1)] }]);

    const inventory = { cpus: 8 };
    const inspection = given([
      started('n2', 'inspect', [step('inventory.read'), step('acme.readInventory', 'acme', { records: 'inventory' })]),
      event('StepSucceeded', { workflowId: 'wf-n2', stepIndex: 0, stepId: 'inventory.read', attempt: 1, output: { cpus: 1 } }).event,
      event('StepSucceeded', { workflowId: 'wf-n2', stepIndex: 1, stepId: 'acme.readInventory', attempt: 1, output: inventory }).event,
    ]);
    inspection.when(event('WorkflowCompleted', { workflowId: 'wf-n2' })).then([
      {
        key: 'wf-n2',
        effects: [
          { command: 'metal.recordInventory', payload: { nodeId: 'n2', workflowId: 'wf-n2', inventory }, commandId: 'wf-n2-inventory' },
          { command: 'metal.completeOperation', payload: { nodeId: 'n2', workflowId: 'wf-n2' }, commandId: 'wf-n2-done' },
        ],
      },
    ]);
  });

  it('fails the node of a failed workflow and completes the cancel of a cancelled one', () => {
    given([started('n1', 'deploy', [step('power.on')])])
      .when(event('WorkflowFailed', { workflowId: 'wf-n1', failedStep: 'power.on', stepIndex: 0, code: 'X', reason: 'BMC said no' }))
      .then([
        {
          key: 'wf-n1',
          effects: [
            {
              command: 'metal.failOperation',
              payload: { nodeId: 'n1', workflowId: 'wf-n1', reason: 'BMC said no', failedStep: 'power.on', code: 'X' },
              commandId: 'wf-n1-failed',
            },
          ],
        },
      ]);
    given([])
      .when(event('NodeCancelRequested', { nodeId: 'n1', workflowId: 'wf-n1', reason: 'operator' }))
      .then([
        {
          key: 'wf-n1',
          effects: [{ command: 'workflow.cancel', payload: { workflowId: 'wf-n1', nodeId: 'n1', reason: 'operator' }, commandId: 'wf-n1-cancel' }],
        },
      ]);
    given([])
      .when(event('WorkflowCancelled', { nodeId: 'n1', workflowId: 'wf-n1' }))
      .then([{ key: 'wf-n1', effects: [{ command: 'metal.completeCancel', payload: { nodeId: 'n1', workflowId: 'wf-n1' }, commandId: 'wf-n1-cancelled' }] }]);
  });

  it('decides the same commands, with the same ids, for a redelivered event', () => {
    const enrolled = () => event('NodeEnrolled', { nodeId: 'n7', siteId: 'dc1', bmc: { address: 'https://10.0.0.7', credentialsRef: 'secret:b' } });
    const commands = (reactions: readonly Reaction[]) => reactions.flatMap((r) => r.effects.map((e) => (e.kind === 'command' ? [e.name, e.commandId] : e)));
    expect(commands(given([]).when(enrolled()).reactions)).toEqual(commands(given([]).when(enrolled()).reactions));
  });
  it("starts an instance's remediation with its target and ends it on the instance, not on a node", () => {
    const instance = { instanceId: 'web', tenantId: 't-a' };
    const remediation = event('InstanceRemediationRequested', {
      ...instance,
      poolId: 'metal-a',
      workflowId: 'wf-web',
      profile: 'probe',
      returnTo: 'running',
      inputs: { profile: 'probe' },
    }).event;
    given([])
      .when({ type: 'event', event: remediation })
      .then([
        {
          key: 'wf-web',
          effects: [
            {
              command: 'workflow.start',
              payload: { workflowId: 'wf-web', nodeId: 'web', siteId: 'metal-a', operation: 'remediate', inputs: { profile: 'probe' }, instance },
              commandId: 'wf-web-start',
              refusable: true,
            },
          ],
        },
      ]);
    const running = event('WorkflowStarted', { ...started('web', 'remediate', [step('probe')]).data, siteId: 'metal-a', instance }).event;
    given([running])
      .when(event('WorkflowCompleted', { workflowId: 'wf-web' }))
      .then([{ key: 'wf-web', effects: [{ command: 'vps.completeRemediation', payload: { ...instance, workflowId: 'wf-web' }, commandId: 'wf-web-done' }] }]);
    given([running])
      .when(event('WorkflowFailed', { workflowId: 'wf-web', failedStep: 'probe', stepIndex: 0, code: 'X', reason: 'no answer' }))
      .then([
        {
          key: 'wf-web',
          effects: [
            {
              command: 'vps.failRemediation',
              payload: { ...instance, workflowId: 'wf-web', reason: 'no answer', failedStep: 'probe' },
              commandId: 'wf-web-failed',
            },
          ],
        },
      ]);
  });
});
