import { describe, expect, it } from 'vitest';
import { AgentCommandParams } from '../../schemas/agent/agentCommand.ts';
import { EnrollNode } from '../../schemas/metal/nodeCommands.ts';
import { getBmcConnection, getNode } from '../../projections/nodes/queries.ts';
import { nodesProjection } from '../../projections/nodes/projector.ts';
import { applyBatch, projectEntry } from '../../services/projectors/applyBatch.ts';
import { openWriter } from '../../projections/runtime/readModelDatabase.ts';
import { builtinProfileCatalog, configuredDeployProfile } from '../../services/metal/profiles/builtin.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { builtinSteps } from '../../services/plugins/builtinSteps.ts';

const enroll = (bmc: Record<string, unknown>) =>
  EnrollNode.safeParse({ siteId: 'dc1', bmc: { credentialsRef: 'secret:b', ...bmc }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] });
const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('metal.enroll BMC options', () => {
  it('takes a BMC, its Redfish root or one of its systems as the address, and nothing else', () => {
    for (const address of [
      'https://10.0.0.5',
      'https://10.0.0.5/',
      'https://10.0.0.5:8443/redfish/v1',
      'https://10.0.0.5/redfish/v1/',
      'https://10.0.0.5/redfish/v1/Systems/2',
      'http://10.0.0.5/redfish/v1/systems/Node-B/',
    ]) {
      expect(enroll({ address }).success, address).toBe(true);
    }
    for (const address of [
      'https://10.0.0.5/redfish/v1/Managers/1',
      'https://10.0.0.5/redfish/v1/Systems',
      'https://10.0.0.5/redfish/v1/Systems/1/Bios',
      'https://10.0.0.5/?x=1',
      'ftp://10.0.0.5',
    ]) {
      expect(enroll({ address }).success, address).toBe(false);
    }
  });

  it('takes one TLS option: a CA bundle, an SPKI pin or insecure, and an auth mode and boot mode', () => {
    const address = 'https://10.0.0.5';
    expect(enroll({ address, tls: { mode: 'ca', caBundle: pem }, auth: 'basic', bootMode: 'Legacy' }).success).toBe(true);
    expect(enroll({ address, tls: { mode: 'pin', spkiSha256: 'BOqHcUcNVQ1+5dBta2rpwsIGC93EHtJZE//TXk+6Rfk=' } }).success).toBe(true);
    expect(enroll({ address, tls: { mode: 'insecure' } }).success).toBe(true);
    expect(enroll({ address, tls: { mode: 'ca', caBundle: 'not a certificate' } }).success).toBe(false);
    expect(enroll({ address, tls: { mode: 'pin', spkiSha256: 'abc' } }).success).toBe(false);
    expect(enroll({ address, tls: { mode: 'insecure', spkiSha256: 'x' } }).success).toBe(false);
    expect(enroll({ address, auth: 'digest' }).success).toBe(false);
  });

  it('the node view shows the options (insecure TLS included) and the monitor reads the whole endpoint', () => {
    const db = openWriter(':memory:', nodesProjection);
    try {
      const bmc = { address: 'https://10.0.0.5/redfish/v1/Systems/2', credentialsRef: 'secret:b', tls: { mode: 'insecure' }, auth: 'session' };
      const metadata = {
        eventId: 'e1',
        aggregateType: 'metal.node',
        aggregateId: 'n1',
        commandId: 'c1',
        commandName: 'metal.enroll',
        correlationId: 'c1',
        causationId: 'c1',
        actor: 't',
        time: '2025-01-01T00:00:00.000Z',
      };
      const events = [
        { type: 'NodeEnrolled', version: 1, data: { nodeId: 'n1', siteId: 'dc1', bmc, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] }, metadata },
      ];
      applyBatch(db, nodesProjection, [projectEntry({ seq: 1, subject: 'bc.evt.metal.node.n1', messageId: 'c1', batch: { events } }).message]);
      expect(getNode(db, 'n1')).toMatchObject({ bmcAddress: bmc.address, bmcTls: 'insecure', bmcAuth: 'session', bmcBootMode: null });
      expect(getBmcConnection(db, 'n1')).toEqual(bmc);
    } finally {
      db.close();
    }
  });
});

describe('bios.apply and raid.apply parameters', () => {
  it('read Name=Value strings as BIOS attributes, and RAID volumes from <name>:<RAIDType>[:<drives>]', () => {
    expect(AgentCommandParams['bios.apply'].parse({ attributes: ['BootMode=Uefi', 'Note=a=b'] })).toEqual({ attributes: { BootMode: 'Uefi', Note: 'a=b' } });
    expect(AgentCommandParams['bios.apply'].parse({})).toEqual({ attributes: {} });
    expect(AgentCommandParams['bios.apply'].safeParse({ attributes: ['=x'] }).success).toBe(false);
    expect(AgentCommandParams['raid.apply'].parse({ create: ['os:RAID1:Disk-1-0, Disk-1-1', 'scratch:RAID0'] })).toEqual({
      delete: [],
      create: [
        { name: 'os', raidType: 'RAID1', drives: ['Disk-1-0', 'Disk-1-1'] },
        { name: 'scratch', raidType: 'RAID0' },
      ],
    });
    expect(AgentCommandParams['raid.apply'].safeParse({ create: ['no-type'] }).success).toBe(false);
    // A deploy input given once is a string, not a list.
    expect(AgentCommandParams['bios.apply'].parse({ attributes: 'ProcTurboMode=Disabled' })).toEqual({ attributes: { ProcTurboMode: 'Disabled' } });
    expect(AgentCommandParams['raid.apply'].parse({ create: 'os:RAID1', delete: 'old' })).toEqual({
      delete: ['old'],
      create: [{ name: 'os', raidType: 'RAID1' }],
    });
    expect(AgentCommandParams['raid.apply'].parse({})).toEqual({ delete: [], create: [] });
  });

  it('the deploy-configured profile is built in, resolves to built-in steps, and binds its inputs', () => {
    expect(builtinProfileCatalog.map((p) => p.id)).toContain('deploy-configured');
    const steps = resolveSteps(configuredDeployProfile, {
      biosAttributes: ['ProcTurboMode=Disabled'],
      raidCreate: ['os:RAID1'],
      imageUrl: 'https://i/x.raw',
      imageSha256: 'a'.repeat(64),
    });
    expect(steps.slice(0, 2)).toMatchObject([
      { id: 'bios.apply', runsOn: 'site', destructive: true, params: { attributes: ['ProcTurboMode=Disabled'] } },
      { id: 'raid.apply', runsOn: 'site', destructive: true, params: { delete: [], create: ['os:RAID1'] } },
    ]);
    for (const step of steps) expect(builtinSteps.get(step.id)?.runsOn, step.id).toBe(step.runsOn);
    expect(builtinSteps.get('bios.apply')?.sends).toEqual(['bios.apply']);
  });
});
