import { enrollNode } from '../metal/node/enroll.ts';
import { deployNode, rescueNode, retireNode, retryNode, startInspection, undeployNode, unrescueNode } from '../metal/node/operate.ts';
import { setMaintenance } from '../metal/node/setMaintenance.ts';
import { completeOperation, failOperation, markWiping, recordInventory } from '../metal/node/workflowOutcome.ts';
import { startWorkflow } from '../metal/workflow/start.ts';
import { completeStep, failStep, startStep } from '../metal/workflow/steps.ts';
import { createSite } from '../site/site/create.ts';
import { registerAgent } from '../trust/agent/register.ts';
import type { CommandDefinition } from './commandDefinition.ts';

/** Every command the control plane accepts, by name. */
export const allCommands: readonly CommandDefinition[] = [
  createSite,
  enrollNode,
  setMaintenance,
  deployNode,
  undeployNode,
  rescueNode,
  unrescueNode,
  retireNode,
  retryNode,
  startInspection,
  completeOperation,
  failOperation,
  markWiping,
  recordInventory,
  startWorkflow,
  startStep,
  completeStep,
  failStep,
  registerAgent,
];

/**
 * Commands only the workflow engine sends (over NATS). They are in `allCommands` because the `commands` service must
 * answer them; an HTTP API that serves operators should leave them out.
 */
export const engineCommandNames: ReadonlySet<string> = new Set([
  startInspection.name,
  completeOperation.name,
  failOperation.name,
  markWiping.name,
  recordInventory.name,
  startWorkflow.name,
  startStep.name,
  completeStep.name,
  failStep.name,
]);

/** What operators may send over the HTTP API: everything but the engine's commands and agent registration. */
export const operatorCommands: readonly CommandDefinition[] = allCommands.filter(
  (c) => !engineCommandNames.has(c.name) && c.name !== registerAgent.name,
);
