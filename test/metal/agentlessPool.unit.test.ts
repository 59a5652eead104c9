import { describe, expect, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import { enrollNode } from '../../services/metal/node/enroll.ts';
import { workflowIdFor } from '../../services/metal/node/lifecycle.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { deployNode } from '../../services/metal/node/deploy.ts';
import { rescueNode } from '../../services/metal/node/rescue.ts';
import { undeployNode } from '../../services/metal/node/undeploy.ts';
import { completeOperation } from '../../services/metal/node/completeOperation.ts';
import { recordInventory } from '../../services/metal/node/recordInventory.ts';
import { agentlessReleaseProfile, builtinProfileFor, releaseProfile } from '../../services/metal/profiles/builtin.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import type { PoolState } from '../../schemas/vps/poolState.ts';
import { fakeInventory } from './fakeAgent.ts';
import { deciderSpec } from './spec.ts';
import { hardwareProfileCatalog } from '../../schemas/metal/hardwareProfileCatalog.ts';

const given = deciderSpec(nodeAggregate);
const n = 'n1';
const wf = workflowIdFor(n, 'cmd-00000001');
const bmc = { address: 'https://10.0.0.1', credentialsRef: 'secret:b' };
const enrollPayload = { nodeId: n, siteId: 'dc1', bmc, hardwareProfile: 'default', macs: ['52:54:00:aa:bb:01'] };
const site = { exists: true };
/** Nobody holds the node's BMC system yet (`metal.enroll` refuses one another node holds). */
const unclaimed = {
  identity: { kind: 'bmcSystem', address: bmc.address } as const,
  claim: { claimedBy: null },
  holder: undefined,
  // The built-in hardware profiles only: no config, no plugin.
  hardwareProfiles: hardwareProfileCatalog([], undefined),
};

const pool = (overrides: Partial<Extract<PoolState, { exists: true }>> = {}): PoolState => ({
  exists: true,
  poolId: 'talos',
  class: 'metal',
  agent: 'none',
  accountId: null,
  siteId: 'dc1',
  policy: { allowUnverifiedRelease: true, provisioningCidrs: ['10.9.0.0/24'] },
  offeredTo: [],
  ...overrides,
});

const enrolledIn = (agent: 'none' | 'bcd'): MetalEvent => ({
  type: 'NodeEnrolled',
  data: { nodeId: n, siteId: 'dc1', bmc, hardwareProfile: 'default', macs: ['52:54:00:aa:bb:01'], poolId: 'talos', agent },
});
const requested = (operation: 'inspect' | 'deploy' | 'release', workflowId: string, inputs: Record<string, unknown> = {}): MetalEvent => ({
  type: 'NodeOperationRequested',
  data: { nodeId: n, siteId: 'dc1', operation, workflowId, inputs },
});
const completed = (operation: 'inspect' | 'deploy' | 'release', workflowId: string): MetalEvent => ({
  type: 'NodeOperationCompleted',
  data: { nodeId: n, operation, workflowId },
});
const deployedIn = (agent: 'none' | 'bcd') => [
  enrolledIn(agent),
  requested('inspect', 'wf-00000000000a'),
  completed('inspect', 'wf-00000000000a'),
  requested('deploy', 'wf-00000000000b', { profile: 'talos-1.8' }),
  completed('deploy', 'wf-00000000000b'),
];

/** The agentless release as it ran: media eject and power off succeeded, nothing was wiped. */
function agentlessRelease() {
  const steps = agentlessReleaseProfile.steps.map((s) => ({
    id: s.id,
    runsOn: s.runsOn,
    params: {},
    timeoutMs: 1000,
    retry: { maxAttempts: 1, backoffMs: 0 },
    destructive: false,
  }));
  const events: WorkflowEvent[] = [
    {
      type: 'WorkflowStarted',
      data: {
        workflowId: wf,
        nodeId: n,
        siteId: 'dc1',
        operation: 'release',
        profile: { id: 'release-agentless', version: 1 },
        startedAt: '2026-12-02T12:00:00.000Z',
        steps,
      },
    },
  ];
  return events.reduce(workflowAggregate.evolve, workflowAggregate.initialState);
}

describe('metal pool membership', () => {
  it('enroll records the pool and its agent when the metal pool is at the node site', () => {
    given([])
      .when(enrollNode, { ...enrollPayload, poolId: 'talos' }, { dependencies: { site, ...unclaimed, pool: pool() } })
      .then([enrolledIn('none')]);
  });

  it('enroll refuses a missing pool, a provider pool and a pool at another site with PRECONDITION_FAILED', () => {
    given([])
      .when(enrollNode, { ...enrollPayload, poolId: 'talos' }, { dependencies: { site, ...unclaimed, pool: { exists: false } } })
      .thenRejects('PRECONDITION_FAILED');
    given([])
      .when(
        enrollNode,
        { ...enrollPayload, poolId: 'talos' },
        { dependencies: { site, ...unclaimed, pool: pool({ class: 'provider', siteId: null, accountId: 'a1' }) } },
      )
      .thenRejects('PRECONDITION_FAILED');
    given([])
      .when(enrollNode, { ...enrollPayload, poolId: 'talos' }, { dependencies: { site, ...unclaimed, pool: pool({ siteId: 'dc2' }) } })
      .thenRejects('PRECONDITION_FAILED');
  });

  it('enroll without a pool records neither pool nor agent', () => {
    given([])
      .when(enrollNode, enrollPayload, { dependencies: { site, ...unclaimed, pool: undefined } })
      .then((events) => {
        expect(events[0]!.data).not.toHaveProperty('poolId');
        expect(events[0]!.data).not.toHaveProperty('agent');
      });
  });

  it('an inspection adds the IPv4 addresses Redfish reported to the node addresses', () => {
    const spec = given([enrolledIn('none'), requested('inspect', 'wf-00000000000a')]);
    const inventory = { ...fakeInventory, nics: [{ id: '1', mac: '52:54:00:aa:bb:01', ipv4Addresses: ['10.9.0.7'] }] };
    const events = spec.when(recordInventory, { nodeId: n, workflowId: 'wf-00000000000a', inventory }).then((e) => expect(e).toHaveLength(1));
    const state = events.reduce(nodeAggregate.evolve, spec.state);
    expect(state.exists && state.addresses).toEqual(['10.9.0.7']);
  });
});

describe('agentless operations', () => {
  it('undeploy of an agentless node asks for the agentless release, which workflow.start resolves', async () => {
    const inputsFor = async (agent: 'none' | 'bcd', poolState: PoolState) => {
      const nodeState = deployedIn(agent).reduce(nodeAggregate.evolve, nodeAggregate.initialState);
      const load = async (aggregate: { type: string }) => (aggregate.type === 'node' ? nodeState : poolState);
      return await undeployNode.dependencies!({ nodeId: n }, load as never);
    };
    const agentless = await inputsFor('none', pool());
    expect(agentless).toEqual({ inputs: { agentless: true } });
    given(deployedIn('none'))
      .when(undeployNode, { nodeId: n }, { dependencies: agentless })
      .then([requested('release', wf, { agentless: true })]);
    expect(builtinProfileFor('release', { agentless: true })).toBe(agentlessReleaseProfile);
    expect(builtinProfileFor('retire', { agentless: true })).toMatchObject({ id: 'retire-agentless', steps: agentlessReleaseProfile.steps });
    expect(agentlessReleaseProfile.steps.map((s) => [s.id, s.runsOn])).toEqual([
      ['media.eject', 'site'],
      ['power.set', 'site'],
    ]);
    expect(await inputsFor('bcd', pool({ agent: 'bcd' }))).toEqual({ inputs: {} });
    given(deployedIn('bcd'))
      .when(undeployNode, { nodeId: n }, { dependencies: { inputs: {} } })
      .then([requested('release', wf)]);
    expect(builtinProfileFor('release', {})).toBe(releaseProfile);
  });

  it("a bcd pool's wipe method reaches the release's wipe step", async () => {
    const nodeState = deployedIn('bcd').reduce(nodeAggregate.evolve, nodeAggregate.initialState);
    const discardPool = pool({ agent: 'bcd', policy: { allowUnverifiedRelease: false, provisioningCidrs: [], wipeMethod: 'discard' } });
    const load = async (aggregate: { type: string }) => (aggregate.type === 'node' ? nodeState : discardPool);
    const dependencies = await undeployNode.dependencies!({ nodeId: n }, load as never);
    expect(dependencies).toEqual({ inputs: { wipeMethod: 'discard' } });
    const steps = resolveSteps(builtinProfileFor('release', dependencies.inputs), { wipeMethod: 'discard' });
    expect(steps.find((s) => s.id === 'disk.wipe')!.params).toEqual({ mode: 'discard' });
    expect(resolveSteps(releaseProfile, {}).find((s) => s.id === 'disk.wipe')!.params).toEqual({ mode: 'zero' });
  });

  it('an unverified release returns the node to ready with NodeReleaseUnverified only when the pool opted in', () => {
    const releasing = given([...deployedIn('none'), requested('release', wf, { agentless: true })]);
    releasing.when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: agentlessRelease(), unverifiedReleaseAllowed: true } }).then([
      { type: 'NodeReleaseUnverified', data: { nodeId: n, workflowId: wf, poolId: 'talos' } },
      { type: 'NodeOperationCompleted', data: { nodeId: n, operation: 'release', workflowId: wf } },
    ]);
  });

  it('an unverified release without the pool opt-in fails into maintenance', () => {
    const releasing = given([...deployedIn('none'), requested('release', wf, { agentless: true })]);
    const events = releasing
      .when(completeOperation, { nodeId: n, workflowId: wf }, { dependencies: { workflow: agentlessRelease(), unverifiedReleaseAllowed: false } })
      .then([
        {
          type: 'NodeOperationFailed',
          data: {
            nodeId: n,
            operation: 'release',
            workflowId: wf,
            reason: 'release finished without an attested disk wipe: no wipe step succeeded',
            failedStep: 'disk.wipe',
            maintenance: true,
          },
        },
      ]);
    const state = events.reduce(nodeAggregate.evolve, releasing.state);
    expect(state.exists && [state.state, state.maintenance, state.maintenanceSource]).toEqual(['failed', true, 'platform']);
  });

  it('rescue of an agentless node is refused with UNSUPPORTED; a bcd node of a pool is rescued', () => {
    given(deployedIn('none')).when(rescueNode, { nodeId: n }).thenRejects('UNSUPPORTED');
    given(deployedIn('bcd'))
      .when(rescueNode, { nodeId: n })
      .then((events) => expect(events.map((e) => e.type)).toEqual(['NodeOperationRequested']));
  });

  it('the built-in deploy (an image written from the ramdisk) is refused on an agentless node; a profile is not', () => {
    const ready = deployedIn('none').slice(0, 3);
    const image = { nodeId: n, imageUrl: 'https://i/x.raw', imageSha256: 'a'.repeat(64), role: 'host' };
    given(ready).when(deployNode, image).thenRejects('UNSUPPORTED');
    given(ready)
      .when(deployNode, { nodeId: n, profile: 'talos-1.8', role: 'host' })
      .then((events) => expect(events.map((e) => e.type)).toEqual(['NodeOperationRequested']));
    given(deployedIn('bcd').slice(0, 3))
      .when(deployNode, image)
      .then((events) => expect(events.map((e) => e.type)).toEqual(['NodeOperationRequested']));
  });
});
