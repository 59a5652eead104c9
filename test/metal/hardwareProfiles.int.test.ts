import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../schemas/envelope.ts';
import type { WorkflowState } from '../../schemas/metal/workflowState.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { WorkflowOrchestrator } from '../../services/processes/orchestrator/orchestrator.ts';
import { loadWorkflowConfig } from '../../services/workflow/config.ts';
import { WorkflowExecutor } from '../../services/workflow/executor.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { storedAgentCommands } from '../support/agentEvidence.ts';
import { startBackbone } from '../support/backboneFixture.ts';
import { deployBody, enrollPayload } from '../support/commandPayloads.ts';

// The deployment config this process reads, as `npm start` would read `better-compute.config.ts`: two profiles.
const configDir = mkdtempSync(join(tmpdir(), 'bc-hwprofiles-'));
writeFileSync(
  join(configDir, 'config.json'),
  JSON.stringify({
    hardwareProfiles: {
      'rack-pxe': { description: 'PXE rack', drivers: { power: 'redfish', management: 'redfish', boot: 'ipxe', deploy: 'image-stream' } },
      'rack-media': { description: 'no agent', drivers: { power: 'redfish', management: 'redfish', boot: 'virtual-media', deploy: 'agentless' } },
    },
  }),
);
process.env.BC_CONFIG = join(configDir, 'config.json');

describe('hardware profiles at enrolment and in the steps that run', () => {
  it(
    'refuses an unknown profile at enrolment and at pool creation (nothing appended) and one the pool does not select; a legacy name still loads and deploys',
    { timeout: 60_000 },
    async () => {
      await using env = await startBackbone();
      const responder = serveCommands(env.nc, env.bus, env.log);
      try {
        const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
        await run('site.create', { siteId: 'dc1', name: 'DC 1' });
        const before = await env.store.streamLastSequence();
        await expect(run('metal.enroll', { ...enrollPayload('n-unknown'), hardwareProfile: 'no-such-rack' })).rejects.toMatchObject({
          code: 'HARDWARE_PROFILE_UNKNOWN',
        });
        expect(await env.store.streamLastSequence()).toBe(before);
        expect((await env.bus.repository.load(nodeAggregate, 'n-unknown')).state.exists).toBe(false);

        // A pool selecting a profile nobody declares is refused when it is created, not at each enrolment into it.
        await expect(
          run('vps.createPool', { poolId: 'racks', class: 'metal', agent: 'bcd', siteId: 'dc1', policy: { hardwareProfile: 'no-such-rack' } }),
        ).rejects.toMatchObject({ code: 'HARDWARE_PROFILE_UNKNOWN' });
        expect(await env.store.streamLastSequence()).toBe(before);

        // A pool's policy selects the profile: an enrolment naming none takes it, one naming another is refused.
        await run('vps.createPool', { poolId: 'pxe', class: 'metal', agent: 'bcd', siteId: 'dc1', policy: { hardwareProfile: 'rack-pxe' } });
        const { hardwareProfile: _named, ...unnamed } = enrollPayload('n-pool');
        await expect(run('metal.enroll', { ...unnamed, poolId: 'pxe', hardwareProfile: 'rack-media' })).rejects.toMatchObject({
          code: 'HARDWARE_PROFILE_MISMATCH',
        });
        await run('metal.enroll', { ...unnamed, poolId: 'pxe' });
        expect((await env.bus.repository.load(nodeAggregate, 'n-pool')).state).toMatchObject({ hardwareProfile: 'rack-pxe', poolId: 'pxe', agent: 'bcd' });

        // An enrolment written before profiles were checked, naming one nobody declares: it loads, and deploys as before.
        const time = new Date().toISOString();
        const metadata = {
          aggregateType: 'metal.node',
          aggregateId: 'n-legacy',
          commandId: 'legacy-enrol',
          commandName: 'metal.enroll',
          correlationId: 'legacy-enrol',
          causationId: 'legacy-enrol',
          actor: 'test',
          time,
        };
        const { nodeId: _id, hardwareProfile: _p, ...legacy } = enrollPayload('n-legacy');
        const batch: EventBatch = {
          events: [
            {
              type: 'NodeEnrolled',
              version: 1,
              data: { nodeId: 'n-legacy', ...legacy, hardwareProfile: 'dl325' },
              metadata: { ...metadata, eventId: randomUUID() },
            },
          ],
        };
        await env.store.append('bc.evt.metal.node.n-legacy', batch, { expectedSeq: 0, msgId: 'legacy-enrol' });
        const workflowOf = (result: Awaited<ReturnType<typeof run>>) => (result.events[0]!.data as { workflowId: string }).workflowId;
        await run('metal.completeOperation', { nodeId: 'n-legacy', workflowId: workflowOf(await run('metal.startInspection', { nodeId: 'n-legacy' })) });
        await run('metal.deploy', deployBody('n-legacy'));
        expect((await env.bus.repository.load(nodeAggregate, 'n-legacy')).state).toMatchObject({ hardwareProfile: 'dl325', current: { operation: 'deploy' } });
      } finally {
        responder.unsubscribe();
      }
    },
  );

  it("runs the release of the node's deploy driver: out of band for agentless, a ramdisk wipe for image-stream", { timeout: 90_000 }, async () => {
    await using env = await startBackbone();
    const responder = serveCommands(env.nc, env.bus, env.log);
    const config = loadWorkflowConfig({}, { workAckWaitMs: 1_500, resultRecheckMs: 500 });
    const orchestrator = new WorkflowOrchestrator(env.nc, env.store, config, env.log);
    const executor = new WorkflowExecutor(env.nc, env.store, config, env.log);
    try {
      const run = (name: string, payload: unknown) => env.bus.execute({ name, payload, actor: 'test' });
      const workflowOf = (result: Awaited<ReturnType<typeof run>>) => (result.events[0]!.data as { workflowId: string }).workflowId;
      await run('site.create', { siteId: 'dc1', name: 'DC 1' });
      // Both deployed through the commands alone, before any workflow runs.
      const deployed = async (nodeId: string, hardwareProfile: string, deploy: Record<string, unknown>) => {
        await run('metal.enroll', {
          ...enrollPayload(nodeId),
          bmc: { address: `https://127.0.0.1:9/redfish/v1/Systems/${nodeId}`, credentialsRef: 'secret:b' },
          hardwareProfile,
        });
        await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.startInspection', { nodeId })) });
        await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.deploy', { ...deployBody(nodeId), ...deploy })) });
      };
      // The built-in deploy streams the image from the ramdisk: refused for a node whose profile deploys agentless.
      await run('metal.enroll', {
        ...enrollPayload('n-refused'),
        bmc: { address: 'https://127.0.0.1:9/redfish/v1/Systems/n-refused', credentialsRef: 'secret:b' },
        hardwareProfile: 'rack-media',
      });
      await run('metal.completeOperation', { nodeId: 'n-refused', workflowId: workflowOf(await run('metal.startInspection', { nodeId: 'n-refused' })) });
      await expect(run('metal.deploy', deployBody('n-refused'))).rejects.toMatchObject({ code: 'UNSUPPORTED' });
      await deployed('n-media', 'rack-media', { profile: 'talos-1.8' });
      await deployed('n-pxe', 'rack-pxe', {});
      expect((await env.bus.repository.load(nodeAggregate, 'n-media')).state).toMatchObject({ hardwareProfile: 'rack-media', agent: 'none' });

      await orchestrator.start();
      await executor.start();
      const releaseSteps = async (nodeId: string) => {
        await run('metal.undeploy', { nodeId });
        await expect
          .poll(async () => (await env.bus.repository.load(nodeAggregate, nodeId)).state, { timeout: 20_000 })
          .toMatchObject({ current: { operation: 'release', workflowId: expect.any(String) } });
        const { current } = (await env.bus.repository.load(nodeAggregate, nodeId)).state as { current: { workflowId: string } };
        await expect.poll(async () => (await env.bus.repository.load(workflowAggregate, current.workflowId)).state.exists, { timeout: 20_000 }).toBe(true);
        const wf = (await env.bus.repository.load(workflowAggregate, current.workflowId)).state as Extract<WorkflowState, { exists: true }>;
        return wf.steps.map((s) => s.id);
      };
      expect(await releaseSteps('n-media')).toEqual(['media.eject', 'power.set']);
      const pxe = await releaseSteps('n-pxe');
      expect(pxe.slice(0, 3)).toEqual(['boot.setOnce', 'power.set', 'wait.agentJoined']);
      expect(pxe).toContain('disk.wipe');
      // The executor ran each one's first step: the site agent was asked to eject media for one, to PXE-boot the other.
      await expect
        .poll(async () => (await storedAgentCommands(env.nc)).map((c) => c.kind).sort(), { timeout: 30_000 })
        .toEqual(expect.arrayContaining(['media.eject', 'boot.setOnce']));
      expect((await storedAgentCommands(env.nc)).map((c) => c.kind)).not.toContain('disk.wipe');
    } finally {
      await executor.stop();
      await orchestrator.stop();
      responder.unsubscribe();
    }
  });
});
