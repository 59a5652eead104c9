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
