import { z } from 'zod';
import { AgentCommandKinds, AgentCommandParams, type AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { InBandInventory } from '../../schemas/metal/inBandInventory.ts';
import { Inventory } from '../../schemas/metal/inventory.ts';
import type { StepDeclarations } from '../../schemas/metal/stepDeclarations.ts';
// Built-in steps are written exactly as a plugin's are: against the SDK's public entry.
import { defineStep, TerminalError, type StepDefinition, type StepNode } from '../../plugins/sdk/index.ts';
import { storeNodeSeed } from './nodeSeedArtefact.ts';

/**
 * What the engine does with these agent steps' results, declared as any plugin's step would (`defineStep`): the
 * wipe's signed result is checked to attest it, the inventories are recorded on the node when an inspection ends.
 */
const agentStepDeclarations: Partial<Record<AgentCommandKind, StepDeclarations>> = {
  'disk.wipe': { attests: 'wipe' },
  'inventory.read': { records: 'inventory' },
  'hardware.probe': { records: 'inBandInventory' },
};

/** An agent command kind as a step: it publishes the command and waits for the agent's signed, verified result. */
function agentStep<K extends AgentCommandKind>(kind: K): StepDefinition<K, Record<string, unknown>> {
  const declared: StepDeclarations = agentStepDeclarations[kind] ?? {};
  return defineStep({
    id: kind,
    runsOn: AgentCommandKinds[kind].runsOn,
    destructive: AgentCommandKinds[kind].destructive,
    sends: [kind],
    ...declared,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it; the rule's inference differs here
    input: AgentCommandParams[kind] as unknown as z.ZodType<Record<string, unknown>>,
    run: async (ctx) => {
      // Only these read `ctx.node`: an instance workflow's context has none, and its own refusals say why.
      if (ramdiskKinds.has(kind)) requireAgentInside(kind, ctx.node);
      // The deploy's first-boot data carries the node seed, so the deployed host's `bcd node` can join.
      const params = kind === 'userdata.write' && ctx.workflow.operation === 'deploy' ? { ...ctx.input, seed: await storeNodeSeed(ctx) } : ctx.input;
      const { payload, agentId } = await ctx.platform.runAgentCommand(kind, params, AgentCommandKinds[kind].destructive);
      // `attested` is not ours to claim: the completeStep decider re-verifies the signed result and sets it.
      if (declared.attests === 'wipe') return { ...(isObject(payload) ? payload : { result: payload }), agentId };
      // What the node will record must be of the shape recorded (and, for the BMC's inventory, of this machine).
      if (declared.records === 'inventory') checkInventoryMatches(ctx.node, payload);
      if (declared.records === 'inBandInventory') return checkedInBandInventory(payload);
      return payload;
    },
  });
}

/** The commands a node workflow sends the bcd ramdisk: the `image-stream` deploy driver's, and its wipe's. */
const ramdiskKinds: ReadonlySet<AgentCommandKind> = new Set(['disk.wipe', 'image.write', 'userdata.write', 'inventory.report', 'hardware.probe']);

/**
 * A ramdisk command runs only where the node's hardware profile deploys with `bcd` (`image-stream`): with the
 * `agentless` driver nothing of ours ever runs there, so the step fails at once instead of waiting out its timeout for
 * an agent that never comes (a workflow profile written for another driver, named by hand).
 */
function requireAgentInside(kind: AgentCommandKind, node: StepNode): void {
  if (ramdiskKinds.has(kind) && node.deployDriver === 'agentless')
    throw new TerminalError(
      'UNSUPPORTED',
      `${kind} runs on the agent inside the machine; node ${node.nodeId} (hardware profile ${node.hardwareProfile}) deploys agentless`,
    );
}

/**
 * An inspection is of the machine the node was enrolled as only when every enrolled MAC is in what the BMC reported:
 * a BMC address naming the wrong system (or a recabled BMC) would otherwise make the node `ready` as another machine,
 * and its deploy would wipe that one. Not retried: the same BMC answers the same.
 */
function checkInventoryMatches(node: StepNode, payload: unknown): void {
  const inventory = Inventory.safeParse(payload);
  if (!inventory.success)
    throw new TerminalError('VALIDATION_FAILED', `inventory.read answered something that is not an inventory: ${inventory.error.message}`);
  const found = new Set(inventory.data.nics.map((nic) => nic.mac));
  const missing = node.macs.filter((mac) => !found.has(mac));
  if (missing.length > 0) {
    throw new TerminalError(
      'INVENTORY_MISMATCH',
      `enrolled MAC(s) ${missing.join(', ')} not on the system at ${node.bmc.address} (it reports ${[...found].join(', ') || 'no MACs'})`,
    );
  }
}

/** What the ramdisk saw from inside: an inventory of that shape, or the step fails (the same ramdisk answers the same). */
function checkedInBandInventory(payload: unknown): InBandInventory {
  const inventory = InBandInventory.safeParse(payload);
  if (!inventory.success)
    throw new TerminalError('VALIDATION_FAILED', `hardware.probe answered something that is not an in-band inventory: ${inventory.error.message}`);
  return inventory.data;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Waits for the ramdisk the previous steps booted: a fresh key registered for this node after the workflow began (or,
 * after a restart from the boot, after that restart: the lost ramdisk's key does not count).
 */
export const waitAgentJoined = defineStep({
  id: 'wait.agentJoined',
  runsOn: 'control-plane',
  destructive: false,
  sends: [],
  input: z.object({ role: z.enum(['ramdisk', 'node']).default('ramdisk') }),
  run: async (ctx) => {
    if (ctx.input.role === 'ramdisk' && ctx.node.deployDriver === 'agentless')
      throw new TerminalError('UNSUPPORTED', `node ${ctx.node.nodeId} (hardware profile ${ctx.node.hardwareProfile}) deploys agentless; no ramdisk will join`);
    return ctx.platform.waitForAgent(ctx.input.role, ctx.workflow.restartedAt ?? ctx.workflow.startedAt);
  },
});

/** Every step the executor can run, by id. */
export const builtinSteps: ReadonlyMap<string, StepDefinition<string, any>> = new Map<string, StepDefinition<string, any>>([
  ...(Object.keys(AgentCommandKinds) as AgentCommandKind[]).map((k) => [k, agentStep(k)] as const),
  [waitAgentJoined.id, waitAgentJoined],
]);
