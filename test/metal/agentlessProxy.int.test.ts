import { generateKeyPairSync } from 'node:crypto';
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
import { storedAgentCommands } from '../support/agentEvidence.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { enrollPayload } from './engineFixture.ts';

const probe = (ctx: { platform: { httpViaSite(request: unknown): Promise<unknown> } }, url: string) =>
  ctx.platform.httpViaSite({ url, poll: true, key: 'probe' }).then((answer) => ({ answered: answer !== null }));

/** Talks to the machine's API without declaring `site.httpProxy` in its sends. */
const undeclared = defineStep({ id: 'test.undeclaredProbe', runsOn: 'control-plane', input: z.object({}), run: (ctx) => probe(ctx, 'http://10.9.0.7/') });
/** The same request, declared: plain http is allowed only because the node's pool names 10.9.0.0/24. */
const declared = defineStep({
  id: 'test.declaredProbe',
  runsOn: 'control-plane',
  relays: ['site'],
  sends: ['site.httpProxy'],
  input: z.object({}),
  run: (ctx) => probe(ctx, 'http://10.9.0.7/'),
});
/** Plain http to an address the node has but neither its site nor its pool lists as provisioning. */
const offNetwork = defineStep({
  id: 'test.offNetworkProbe',
  runsOn: 'control-plane',
  relays: ['site'],
  sends: ['site.httpProxy'],
  input: z.object({}),
  run: (ctx) => probe(ctx, 'http://10.8.0.7/'),
});

describe('site.httpProxy of an agentless pool node', () => {
  it('is refused at enqueue when the step did not declare it (approvers configured), and uses the pool provisioning CIDRs', { timeout: 60_000 }, async () => {
    await using env = await startBackbone();
    const responder = serveCommands(env.nc, env.bus, env.log);
    const config = loadWorkflowConfig({}, { workAckWaitMs: 1_500, resultRecheckMs: 500 });
    const orchestrator = new WorkflowOrchestrator(env.nc, env.store, config, env.log);
    const steps = new Map([...builtinSteps, ...[undeclared, declared, offNetwork].map((s) => [s.id, s] as const)]);
    const executor = new WorkflowExecutor(env.nc, env.store, config, env.log, { steps });
    await orchestrator.start();
    await executor.start();
    try {
      const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
      await run('site.create', { siteId: 'dc1', name: 'DC 1' });
      await run('vps.createPool', {
        poolId: 'talos',
        class: 'metal',
        agent: 'none',
        siteId: 'dc1',
        policy: { allowUnverifiedRelease: true, provisioningCidrs: ['10.9.0.0/24'] },
      });
      await run('metal.enroll', { ...enrollPayload('n1'), addresses: ['10.9.0.7', '10.8.0.7'], poolId: 'talos' });
      const approver = {
        approverId: 'alice',
        publicKey: Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
      };
      await run('pki.setApprovers', { approvers: [approver], threshold: 1, approvalTtlSeconds: 3_600 });

      // One-step workflows written to the log as `workflow.start` would write them.
      const start = async (workflowId: string, stepId: string) => {
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
        const step = {
          id: stepId,
          runsOn: 'control-plane' as const,
          params: {},
          timeoutMs: 30_000,
          retry: { maxAttempts: 1, backoffMs: 0 },
          destructive: false,
        };
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
      const settled = async (id: string) => {
        await expect
          .poll(async () => ((await env.bus.repository.load(workflowAggregate, id)).state as { status?: string }).status, { timeout: 15_000 })
          .toMatch(/^(completed|failed)$/);
        return (await env.bus.repository.load(workflowAggregate, id)).state as {
          status: string;
          progress: readonly { error?: { code: string }; output?: unknown }[];
        };
      };

      await start('wf-0000000bb001', undeclared.id);
      await start('wf-0000000bb002', declared.id);
      await start('wf-0000000bb003', offNetwork.id);
      expect(await settled('wf-0000000bb001')).toMatchObject({ status: 'failed', progress: [{ error: { code: 'PRECONDITION_FAILED' } }] });
      expect(await settled('wf-0000000bb002')).toMatchObject({ status: 'completed', progress: [{ output: { answered: false } }] });
      expect(await settled('wf-0000000bb003')).toMatchObject({ status: 'failed', progress: [{ error: { code: 'PROXY_REFUSED' } }] });

      // Only the declared request reached the agents' stream, on the site agent's subject.
      const sent = (await storedAgentCommands(env.nc)).filter((c) => c.kind === 'site.httpProxy');
      expect(sent.map((c) => c.commandId)).toEqual(['wf-0000000bb002-s0-a1-probe-1']);
    } finally {
      await executor.stop();
      await orchestrator.stop();
      responder.unsubscribe();
    }
  });
});
