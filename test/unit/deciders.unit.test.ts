import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import type { SiteEvent } from '../../schemas/site/events.ts';
import type { AggregateDefinition, CommandDefinition, DomainEventLike } from '../../services/platform/commands/commandDefinition.ts';
import { enrollNode } from '../../services/metal/node/enroll.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { setMaintenance } from '../../services/metal/node/setMaintenance.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { createSite } from '../../services/site/site/create.ts';
import { siteAggregate } from '../../services/site/site/site.ts';
import type { SiteState } from '../../schemas/site/siteState.ts';
import { hardwareProfileCatalog } from '../../schemas/metal/hardwareProfileCatalog.ts';

/** Given prior events folded with `evolve`, when `decide` runs on the parsed payload: its events or its refusal code. */
function given<S, E extends DomainEventLike>(aggregate: AggregateDefinition<S, E>, ...events: E[]) {
  const state = events.reduce((s, e) => aggregate.evolve(s, e), aggregate.initialState);
  return {
    state,
    when(command: CommandDefinition<string, any, S, E, any>, payload: unknown, extra: { commandId?: string; dependencies?: unknown } = {}) {
      const context = { commandId: extra.commandId ?? 'cmd-given-01', actor: 'spec', now: '2025-01-01T00:00:00.000Z', dependencies: extra.dependencies };
      try {
        return { events: command.decide(command.schema.parse(payload), state, context) };
      } catch (err) {
        if (err instanceof DomainError) return { code: err.code };
        throw err;
      }
    },
  };
}

const siteCreated = (siteId = 'dc1', provisioningCidrs: string[] = []): SiteEvent => ({
  type: 'SiteCreated',
  data: { siteId, name: 'DC 1', provisioningCidrs },
});
const existingSite: SiteState = { exists: true, siteId: 'dc1', name: 'DC 1', provisioningCidrs: [] };
const missingSite: SiteState = { exists: false };

const enrollPayload = (over: Record<string, unknown> = {}) => ({
  nodeId: 'n1',
  siteId: 'dc1',
  bmc: { address: 'https://10.0.0.21', credentialsRef: 'secret:bmc-1' },
  hardwareProfile: 'default',
  macs: ['52-54-00-AA-BB-01'],
  ...over,
});
const enrolled = (nodeId = 'n1'): MetalEvent => ({
  type: 'NodeEnrolled',
  data: {
    nodeId,
    siteId: 'dc1',
    bmc: { address: 'https://10.0.0.21', credentialsRef: 'secret:bmc-1' },
    hardwareProfile: 'default',
    macs: ['52:54:00:aa:bb:01'],
  },
});
const maintenance = (on: boolean, reason: string | null, source: 'operator' | 'bmc' = 'operator'): MetalEvent => ({
  type: 'NodeMaintenanceSet',
  data: { nodeId: 'n1', on, reason, source },
});

describe('site.create', () => {
  it('site.create creates a site that does not exist, defaulting to no provisioning CIDRs', () => {
    expect(given(siteAggregate).when(createSite, { siteId: 'dc1', name: 'DC 1' })).toEqual({ events: [siteCreated()] });
  });

  it('site.create carries the provisioning CIDRs into the event', () => {
    expect(given(siteAggregate).when(createSite, { siteId: 'dc1', name: 'DC 1', provisioningCidrs: ['10.0.0.0/24'] })).toEqual({
      events: [siteCreated('dc1', ['10.0.0.0/24'])],
    });
  });

  it('site.create refuses an existing site with ALREADY_EXISTS', () => {
    expect(given(siteAggregate, siteCreated()).when(createSite, { siteId: 'dc1', name: 'Other' })).toEqual({ code: 'ALREADY_EXISTS' });
  });

  it('site.create evolves into the created site', () => {
    expect(given(siteAggregate, siteCreated('dc1', ['10.0.0.0/24'])).state).toEqual({
      exists: true,
      siteId: 'dc1',
      name: 'DC 1',
      provisioningCidrs: ['10.0.0.0/24'],
    });
  });
});

const bmcSystem = { kind: 'bmcSystem', address: 'https://10.0.0.21' } as const;
/** Nobody holds the BMC system yet. */
// Nobody holds the system; the built-in hardware profiles only (no config, no plugin).
const unclaimed = { identity: bmcSystem, claim: { claimedBy: null }, holder: undefined, hardwareProfiles: hardwareProfileCatalog([], undefined) };

describe('metal.enroll', () => {
  it('metal.enroll enrolls a new node at an existing site with normalised MACs', () => {
    expect(given(nodeAggregate).when(enrollNode, enrollPayload(), { dependencies: { site: existingSite, ...unclaimed } })).toEqual({ events: [enrolled()] });
  });

  it('metal.enroll refuses a missing site with PRECONDITION_FAILED', () => {
    expect(given(nodeAggregate).when(enrollNode, enrollPayload(), { dependencies: { site: missingSite, ...unclaimed } })).toEqual({
      code: 'PRECONDITION_FAILED',
    });
  });

  it('metal.enroll refuses an enrolled node with ALREADY_EXISTS, before looking at the site', () => {
    const node = given(nodeAggregate, enrolled());
    expect(node.when(enrollNode, enrollPayload(), { dependencies: { site: existingSite, ...unclaimed } })).toEqual({ code: 'ALREADY_EXISTS' });
    expect(node.when(enrollNode, enrollPayload(), { dependencies: { site: missingSite, ...unclaimed } })).toEqual({ code: 'ALREADY_EXISTS' });
  });

  it('metal.enroll derives the node id from the command id when none is given', () => {
    const payload = enrollPayload({ nodeId: undefined });
    const expectedId = `n-${createHash('sha256').update('cmd-derive-1').digest('hex').slice(0, 16)}`;
    const result = given(nodeAggregate).when(enrollNode, payload, { commandId: 'cmd-derive-1', dependencies: { site: existingSite, ...unclaimed } });
    expect(result).toEqual({ events: [{ ...enrolled(expectedId) }] });
    expect(enrollNode.aggregateId(enrollNode.schema.parse(payload), { commandId: 'cmd-derive-1', actor: 'a', now: '' })).toBe(expectedId);
  });

  it('metal.enroll refuses the BMC system another enrolled node holds with NODE_IDENTITY_CONFLICT; a retired holder frees it', () => {
    const holder = given(nodeAggregate, enrolled('n0')).state;
    const held = { ...unclaimed, claim: { claimedBy: 'n0' }, holder };
    expect(given(nodeAggregate).when(enrollNode, enrollPayload(), { dependencies: { site: existingSite, ...held } })).toEqual({
      code: 'NODE_IDENTITY_CONFLICT',
    });
    const retired = { ...held, holder: { ...holder, state: 'retired' } };
    expect(given(nodeAggregate).when(enrollNode, enrollPayload(), { dependencies: { site: existingSite, ...retired } })).toEqual({ events: [enrolled()] });
  });

  it('metal.enroll evolves into an enrolled node out of maintenance', () => {
    expect(given(nodeAggregate, enrolled()).state).toMatchObject({
      exists: true,
      nodeId: 'n1',
      state: 'enrolled',
      maintenance: false,
      maintenanceReason: null,
    });
  });
});

describe('metal.setMaintenance', () => {
  const node = (...events: MetalEvent[]) => given(nodeAggregate, enrolled(), ...events);

  it('metal.setMaintenance refuses a node that is not enrolled with NOT_FOUND', () => {
    expect(given(nodeAggregate).when(setMaintenance, { nodeId: 'n1', on: true })).toEqual({ code: 'NOT_FOUND' });
  });

  it('metal.setMaintenance turns maintenance on with the reason, from the operator', () => {
    expect(node().when(setMaintenance, { nodeId: 'n1', on: true, reason: 'disk swap' })).toEqual({ events: [maintenance(true, 'disk swap')] });
  });

  it('metal.setMaintenance turns maintenance on without a reason as a null reason', () => {
    expect(node().when(setMaintenance, { nodeId: 'n1', on: true })).toEqual({ events: [maintenance(true, null)] });
  });

  it('metal.setMaintenance answers [] when the flag and reason already match', () => {
    expect(node(maintenance(true, 'disk swap')).when(setMaintenance, { nodeId: 'n1', on: true, reason: 'disk swap' })).toEqual({ events: [] });
    expect(node().when(setMaintenance, { nodeId: 'n1', on: false })).toEqual({ events: [] });
  });

  it('metal.setMaintenance changes the reason while maintenance stays on', () => {
    expect(node(maintenance(true, 'disk swap')).when(setMaintenance, { nodeId: 'n1', on: true, reason: 'firmware' })).toEqual({
      events: [maintenance(true, 'firmware')],
    });
  });

  it('metal.setMaintenance clears maintenance and drops any reason given with off', () => {
    expect(node(maintenance(true, 'disk swap')).when(setMaintenance, { nodeId: 'n1', on: false, reason: 'ignored' })).toEqual({
      events: [maintenance(false, null)],
    });
    expect(node().when(setMaintenance, { nodeId: 'n1', on: false, reason: 'ignored' })).toEqual({ events: [] });
  });

  it('metal.setMaintenance evolves the flag and clears the reason when off', () => {
    expect(node(maintenance(true, 'disk swap')).state).toMatchObject({ maintenance: true, maintenanceReason: 'disk swap' });
    expect(node(maintenance(true, 'disk swap'), maintenance(false, 'stale')).state).toMatchObject({ maintenance: false, maintenanceReason: null });
  });

  it('metal.setMaintenance leaves a node that is not enrolled unchanged when folded', () => {
    expect(given(nodeAggregate, maintenance(true, 'x')).state).toEqual({ exists: false });
  });
});
