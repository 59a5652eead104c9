import { z } from 'zod';
import { AgentCommandKinds, AgentCommandParams, type AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import { defineStep, type StepDefinition } from './defineStep.ts';

/** An agent command kind as a step: it publishes the command and waits for the agent's signed, verified result. */
function agentStep<K extends AgentCommandKind>(kind: K): StepDefinition<K, Record<string, unknown>> {
  return defineStep({
    id: kind,
    runsOn: AgentCommandKinds[kind].runsOn,
    destructive: AgentCommandKinds[kind].destructive,
    sends: [kind],
    input: AgentCommandParams[kind] as unknown as z.ZodType<Record<string, unknown>>,
    run: async (ctx) => {
      const { payload, agentId } = await ctx.platform.runAgentCommand(kind, ctx.input, AgentCommandKinds[kind].destructive);
      // `attested` is not ours to claim: the completeStep decider re-verifies the signed result and sets it.
      if (kind === 'disk.wipe') return { ...(isObject(payload) ? payload : { result: payload }), agentId };
      return payload;
    },
  });
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
  run: async (ctx) => ctx.platform.waitForAgent(ctx.input.role, ctx.workflow.restartedAt ?? ctx.workflow.startedAt),
});

/** Every step the executor can run, by id. */
export const builtinSteps: ReadonlyMap<string, StepDefinition<string, any>> = new Map<string, StepDefinition<string, any>>([
  ...(Object.keys(AgentCommandKinds) as AgentCommandKind[]).map((k) => [k, agentStep(k)] as const),
  [waitAgentJoined.id, waitAgentJoined],
]);
