import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../schemas/envelope.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { builtinSteps } from '../../services/plugins/builtinSteps.ts';
import { loadWorkflowConfig } from '../../services/workflow/config.ts';
import { defineStep } from '../../plugins/sdk/defineStep.ts';
import { WorkflowExecutor } from '../../services/workflow/executor.ts';
import { WorkflowOrchestrator } from '../../services/processes/orchestrator/orchestrator.ts';
import { stepNotReady } from '../../plugins/sdk/stepErrors.ts';
import { enrollPayload } from '../metal/engineFixture.ts';
import { startBackbone } from '../support/backboneFixture.ts';

let machineUp = false;
const runs: string[] = [];
const waitForMachine = defineStep({
  id: 'test.waitForMachine',
  runsOn: 'control-plane',
  input: z.object({}),
  output: z.object({ polls: z.number().int() }),
  run: async (ctx) => {
    runs.push(ctx.idempotencyKey);
    if (!machineUp) stepNotReady('machine API not answering yet', { retryAfterMs: 100 });
    return { polls: runs.length };
  },
});
const neverUp = defineStep({ id: 'test.neverUp', runsOn: 'control-plane', input: z.object({}), run: async () => stepNotReady('never', { retryAfterMs: 100 }) });
const badOutput = defineStep({
  id: 'test.badOutput',
  runsOn: 'control-plane',
  input: z.object({}),
  output: z.object({ ok: z.literal(true) }),
  run: async () => ({ ok: 'yes' }) as never,
});

describe('steps that are not ready yet', () => {
  it('run again as the same attempt until ready, time out at the step timeout, and have their output checked', { timeout: 60_000 }, async () => {
    await using env = await startBackbone();
    const responder = serveCommands(env.nc, env.bus, env.log);
    const config = loadWorkflowConfig({}, { workAckWaitMs: 1_500, resultRecheckMs: 500 });
    const orchestrator = new WorkflowOrchestrator(env.nc, env.store, config, env.log);
    const steps = new Map([...builtinSteps, ...[waitForMachine, neverUp, badOutput].map((s) => [s.id, s] as const)]);
    const executor = new WorkflowExecutor(env.nc, env.store, config, env.log, { steps });
    await orchestrator.start();
    await executor.start();
    try {
      await env.bus.execute({ name: 'site.create', payload: { siteId: 'dc1', name: 'DC 1' }, actor: 'test' });
      await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n1'), actor: 'test' });
      // A workflow of one custom step, written to the log as `workflow.start` would (profiles are built in for now).
      const start = async (workflowId: string, stepId: string, timeoutMs: number) => {
        const time = new Date().toISOString();
        const metadata = {
          aggregateType: 'metal.workflow',
          aggregateId: workflowId,
          commandId: `${workflowId}-start`,
          commandName: 'workflow.start',
          correlationId: workflowId,
          causationId: workflowId,
          actor: 'test',
          time,
        };
        const step = { id: stepId, runsOn: 'control-plane' as const, params: {}, timeoutMs, retry: { maxAttempts: 1, backoffMs: 0 }, destructive: false };
        const batch: EventBatch = {
          events: [
            {
              type: 'WorkflowStarted',
              version: 1,
              data: { workflowId, nodeId: 'n1', siteId: 'dc1', operation: 'rescue', profile: { id: 'test', version: 1 }, steps: [step], startedAt: time },
              metadata: { ...metadata, eventId: randomUUID() },
            },
            { type: 'StepScheduled', version: 1, data: { workflowId, stepIndex: 0, stepId, attempt: 1 }, metadata: { ...metadata, eventId: randomUUID() } },
          ],
        };
        await env.store.append(`bc.evt.metal.workflow.${workflowId}`, batch, { expectedSeq: 0, msgId: `${workflowId}-start` });
      };
      const workflow = async (id: string) => (await env.bus.repository.load(workflowAggregate, id)).state;

      await start('wf-00000000aaa1', waitForMachine.id, 30_000);
      await expect.poll(() => runs.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      expect(await workflow('wf-00000000aaa1')).toMatchObject({ status: 'running', progress: [{ status: 'running', attempt: 1 }] });
      machineUp = true;
      await expect.poll(async () => ((await workflow('wf-00000000aaa1')) as { status: string }).status, { timeout: 10_000 }).toBe('completed');
      const done = await workflow('wf-00000000aaa1');
      if (!done.exists) throw new Error('no workflow');
      expect(done.progress[0]).toMatchObject({ status: 'succeeded', attempt: 1, output: { polls: runs.length } });
      // Every run was the same attempt: one idempotency key throughout.
      expect(new Set(runs)).toEqual(new Set(['wf-00000000aaa1-s0-a1']));

      await start('wf-00000000aaa2', neverUp.id, 1_000);
      await start('wf-00000000aaa3', badOutput.id, 30_000);
      await expect.poll(async () => ((await workflow('wf-00000000aaa2')) as { status: string }).status, { timeout: 15_000 }).toBe('failed');
      await expect.poll(async () => ((await workflow('wf-00000000aaa3')) as { status: string }).status, { timeout: 15_000 }).toBe('failed');
      expect(((await workflow('wf-00000000aaa2')) as { progress: readonly unknown[] }).progress[0]).toMatchObject({ error: { code: 'STEP_TIMEOUT' } });
      expect(((await workflow('wf-00000000aaa3')) as { progress: readonly unknown[] }).progress[0]).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    } finally {
      await executor.stop();
      await orchestrator.stop();
      responder.unsubscribe();
    }
  });
});
