import { eventCatalog, type PlatformEvent } from '../../../schemas/events.ts';
import { idFor } from '../../../schemas/ids.ts';
import { isMachineUuid } from '../../../schemas/metal/nodeIdentity.ts';
import { stepAttemptId, type WorkMessage } from '../../../schemas/metal/workflow.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import type { DefinitionsOf, EngineCommand, Fold, Input, ProcessManager, Reaction } from '../../platform/processManager/processManager.ts';
import { FleetModel, type Caps, type PendingOperation } from './fleetModel.ts';

export const ORCHESTRATOR_DURABLE = 'workflow_orchestrator';

/** Commands that end a workflow for the orchestrator: once decided, its step details are no longer needed. */
const ending = new Set(['metal.completeOperation', 'metal.completeCancel', 'metal.failOperation', 'vps.completeRemediation', 'vps.failRemediation']);

const command = (name: string, payload: unknown, commandId: string, ifRefused?: EngineCommand['ifRefused']): EngineCommand => ({
  kind: 'command',
  name,
  payload,
  commandId,
  ...(ifRefused ? { ifRefused } : {}),
});

/** Folds the log (and the starts and ends it decided) into the fleet model. */
export function evolveFleet(model: FleetModel, input: Fold<PlatformEvent>): void {
  if (input.type === 'event') return model.apply(input.event);
  if (input.type !== 'decided') return;
  const { name, payload } = input.command;
  if (name === 'workflow.start') model.admitted(payload as PendingOperation);
  if (ending.has(name)) model.forget((payload as { workflowId: string }).workflowId);
}

/**
 * What the orchestrator does about an event, as data: enrolled nodes are inspected; scheduled steps become work
 * messages; finished workflows complete or fail their node. After every event (and on start) whatever the site and
 * tenant caps allow now is started. Every command id is derived from what it answers, so a redelivered event sends the same
 * commands again, which the bus answers as duplicates. Reactions are keyed by workflow (by node before there is one),
 * so one workflow's stay in order.
 */
export function decideOrchestration(input: Input<PlatformEvent>, model: FleetModel, caps: Caps): Reaction[] {
  const reactions = input.type === 'event' ? reactionsTo(input.event, model) : [];
  for (const op of model.admissible(caps)) reactions.push(startOf(op));
  return reactions;
}

function reactionsTo(event: PlatformEvent, model: FleetModel): Reaction[] {
  switch (event.type) {
    case 'NodeEnrolled': {
      const { nodeId, bmc } = event.data;
      // A machine another node already holds is not touched: no inspection powers it on (see metal.claimIdentity).
      const claim = command('metal.claimIdentity', { nodeId, identity: { kind: 'bmcSystem', address: bmc.address } }, idFor('claim-bmc', nodeId), (refusal) =>
        refusal.code === 'NODE_IDENTITY_CONFLICT' ? [] : undefined,
      );
      return [{ key: `node/${nodeId}`, effects: [claim, command('metal.startInspection', { nodeId }, idFor('inspect', nodeId))] }];
    }
    case 'StepScheduled': {
      const { workflowId, stepIndex, stepId, attempt } = event.data;
      const work: WorkMessage = { workflowId, stepIndex, attempt };
      const wf = model.workflows.get(workflowId);
      // A plugin's step waits on the plugin's own work subject until one of its replicas takes it.
      const plugin = wf?.steps[stepIndex]?.plugin;
      const subject = plugin ? Subjects.pluginWork(plugin, stepId) : Subjects.work('control-plane', stepId);
      const effects: Reaction['effects'] = [{ kind: 'publish', subject, data: work, msgId: stepAttemptId(workflowId, stepIndex, attempt) }];
      // A step that attests a wipe marks the node wiping as it is scheduled: from then on its data may be gone.
      if (wf?.steps[stepIndex]?.attests === 'wipe')
        return [{ key: workflowId, effects: [...effects, command('metal.markWiping', { nodeId: wf.nodeId, workflowId }, `${workflowId}-wiping`)] }];
      return [{ key: workflowId, effects }];
    }
    case 'WorkflowCompleted': {
      const { workflowId } = event.data;
      const wf = model.workflows.get(workflowId);
      if (!wf) return [];
      const inventoryAt = wf.steps.findIndex((s) => s.records === 'inventory');
      const probeAt = wf.steps.findIndex((s) => s.records === 'inBandInventory');
      const inBand = probeAt >= 0 ? { inBand: wf.outputs[probeAt] } : {};
      const inventory =
        wf.operation === 'inspect' && inventoryAt >= 0
          ? [command('metal.recordInventory', { nodeId: wf.nodeId, workflowId, inventory: wf.outputs[inventoryAt], ...inBand }, `${workflowId}-inventory`)]
          : [];
      if (wf.instance) return [{ key: workflowId, effects: [command('vps.completeRemediation', { ...wf.instance, workflowId }, `${workflowId}-done`)] }];
      const claim = inventory.length > 0 ? uuidClaim(wf.nodeId, workflowId, wf.outputs[inventoryAt], inventory) : [];
      return [
        { key: workflowId, effects: [...claim, ...inventory, command('metal.completeOperation', { nodeId: wf.nodeId, workflowId }, `${workflowId}-done`)] },
      ];
    }
    case 'NodeCancelRequested': {
      const { workflowId, nodeId, reason } = event.data;
      return [{ key: workflowId, effects: [command('workflow.cancel', { workflowId, nodeId, reason }, `${workflowId}-cancel`)] }];
    }
    case 'WorkflowCancelled': {
      const { workflowId, nodeId } = event.data;
      return [{ key: workflowId, effects: [command('metal.completeCancel', { nodeId, workflowId }, `${workflowId}-cancelled`)] }];
    }
    case 'WorkflowFailed': {
      const { workflowId, reason, failedStep, code } = event.data;
      const wf = model.workflows.get(workflowId);
      if (!wf) return [];
      const ended = { workflowId, reason: reason.slice(0, 1000), failedStep };
      const failure = wf.instance
        ? command('vps.failRemediation', { ...wf.instance, ...ended }, `${workflowId}-failed`)
        : command('metal.failOperation', { nodeId: wf.nodeId, ...ended, code: code.slice(0, 100) }, `${workflowId}-failed`);
      return [{ key: workflowId, effects: [failure] }];
    }
    default:
      return [];
  }
}

/**
 * The claim of the system UUID inspection read: when another node holds it, the inventory is still recorded (the
 * operator sees the UUID) and the inspection fails with the conflict instead of making the node ready.
 */
function uuidClaim(nodeId: string, workflowId: string, inventory: unknown, record: readonly EngineCommand[]): EngineCommand[] {
  const uuid = (inventory as { productUuid?: unknown } | undefined)?.productUuid;
  if (typeof uuid !== 'string' || !isMachineUuid(uuid)) return [];
  const conflict: EngineCommand['ifRefused'] = (refusal) =>
    refusal.code === 'NODE_IDENTITY_CONFLICT'
      ? [
          ...record,
          command(
            'metal.failOperation',
            { nodeId, workflowId, reason: `NODE_IDENTITY_CONFLICT: ${refusal.message}`.slice(0, 1000), failedStep: null },
            `${workflowId}-conflict`,
          ),
        ]
      : undefined;
  return [command('metal.claimIdentity', { nodeId, identity: { kind: 'systemUuid', uuid } }, `${workflowId}-claim-uuid`, conflict)];
}

/** Refusals of a start that no retry can change: the profile is unknown or invalid, or it is not the plan approved. */
const unstartable = new Set(['PRECONDITION_FAILED', 'PLAN_DIGEST_MISMATCH']);

/** A start; one that can never be accepted fails the operation (or the instance's remediation) with the reason instead of waiting forever. */
function startOf(op: PendingOperation): Reaction {
  const { workflowId, nodeId, siteId, operation, inputs, instance } = op;
  const refused: EngineCommand['ifRefused'] = (refusal) => {
    if (!unstartable.has(refusal.code)) return undefined;
    const ended = { workflowId, reason: refusal.message.slice(0, 1000), failedStep: null };
    return [
      instance
        ? command('vps.failRemediation', { ...instance, ...ended }, `${workflowId}-refused`)
        : command('metal.failOperation', { nodeId, ...ended }, `${workflowId}-refused`),
    ];
  };
  const start = { workflowId, nodeId, siteId, operation, inputs, ...(instance ? { instance } : {}) };
  return { key: workflowId, effects: [command('workflow.start', start, `${workflowId}-start`, refused)] };
}

/** A crashed orchestrator's unacked events return after this. */
const ACK_WAIT_MS = 15_000;

/**
 * `workflow-orchestrator` as a process manager: the whole log in, the fleet model, the caps from its config (a
 * tenant's own caps come from the log: `TenantCapsSet`).
 */
export function orchestration(caps: Caps): ProcessManager<DefinitionsOf<typeof eventCatalog>, FleetModel> {
  return {
    durable: ORCHESTRATOR_DURABLE,
    filter: Subjects.allEvents,
    catalog: eventCatalog,
    ackWaitMs: ACK_WAIT_MS,
    maxInFlight: 512,
    model: new FleetModel(),
    evolve: evolveFleet,
    decide: (input, model) => decideOrchestration(input, model, caps),
  };
}
