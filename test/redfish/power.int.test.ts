import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, PASSWORD, requestsTo, simulate, trees, writes } from './harness.ts';

describe.each(trees)('power control on $tree', (facts) => {
  it('reads the power state', async () => {
    const sim = await simulate(facts.tree);
    expect(await clientFor(sim).getPowerState()).toBe('On');
  });

  it('powers an Off machine On for "cycle", with exactly one Reset', async () => {
    const sim = await simulate(facts.tree, { systemOverrides: { PowerState: 'Off' }, powerDelayMs: 30 });
    const result = await clientFor(sim).setPower('cycle');
    expect(result).toEqual({ action: 'cycle', before: 'Off', after: 'On', resetTypes: ['On'] });
    const resets = requestsTo(sim, 'POST', facts.resetUri);
    expect(resets).toHaveLength(1);
    expect(resets[0]?.body).toEqual({ ResetType: 'On' });
    expect(sim.state.powerState).toBe('On');
  });

  it('sends nothing for "on" when the machine is already On', async () => {
    const sim = await simulate(facts.tree);
    const result = await clientFor(sim).setPower('on');
    expect(result.resetTypes).toEqual([]);
    expect(writes(sim)).toEqual([]);
  });

  it('waits out the power delay before reporting "off" done', async () => {
    const powerDelayMs = 100;
    const sim = await simulate(facts.tree, { powerDelayMs });
    const started = Date.now();
    const result = await clientFor(sim).setPower('off');
    expect(Date.now() - started).toBeGreaterThanOrEqual(powerDelayMs - 5);
    expect(result.resetTypes).toEqual(['ForceOff']);
    expect(sim.state.powerState).toBe('Off');
    const reset = requestsTo(sim, 'POST', facts.resetUri)[0];
    // The client kept polling after the reset, because the BMC still said On.
    const pollsAfter = requestsTo(sim, 'GET', facts.systemUri).filter((r) => r.time >= (reset?.time ?? 0));
    expect(pollsAfter.length).toBeGreaterThan(1);
  });

  it('restarts a running machine with ForceRestart when PowerCycle is not allowed', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 20 });
    const result = await clientFor(sim).setPower('cycle');
    expect(result.resetTypes).toEqual(['ForceRestart']);
    await expect.poll(() => sim.state.boots.length).toBe(1);
  });

  it('uses GracefulShutdown for "softOff" and is a no-op when already Off', async () => {
    const sim = await simulate(facts.tree);
    const client = clientFor(sim);
    expect((await client.setPower('softOff')).resetTypes).toEqual(['GracefulShutdown']);
    expect((await client.setPower('softOff')).resetTypes).toEqual([]);
    expect((await client.setPower('off')).resetTypes).toEqual([]);
    expect(requestsTo(sim, 'POST', facts.resetUri)).toHaveLength(1);
  });

  it('reads allowable ResetTypes from @Redfish.ActionInfo and prefers PowerCycle', async () => {
    const infoUri = `${facts.systemUri}/ResetActionInfo`;
    const sim = await simulate(facts.tree, {
      systemOverrides: {
        Actions: {
          '#ComputerSystem.Reset': { 'ResetType@Redfish.AllowableValues': undefined, '@Redfish.ActionInfo': infoUri },
        },
      },
      extraResources: {
        [infoUri]: {
          '@odata.id': infoUri,
          '@odata.type': '#ActionInfo.v1_1_2.ActionInfo',
          Id: 'ResetActionInfo',
          Parameters: [{ Name: 'ResetType', Required: true, DataType: 'String', AllowableValues: ['On', 'ForceOff', 'PowerCycle'] }],
        },
      },
    });
    const result = await clientFor(sim).setPower('cycle');
    expect(result.resetTypes).toEqual(['PowerCycle']);
    expect(requestsTo(sim, 'GET', infoUri)).toHaveLength(1);
  });

  it('works over a Redfish session and ends it on close', async () => {
    const sim = await simulate(facts.tree);
    const client = clientFor(sim, { auth: 'session' });
    await client.setPower('off');
    expect(sim.state.sessionCount).toBe(1);
    const authenticated = sim.requestLog.filter((r) => r.auth !== 'none');
    expect(authenticated.length).toBeGreaterThan(2);
    expect(authenticated.every((r) => r.auth === 'session')).toBe(true);
    await client.close();
    expect(sim.state.sessionCount).toBe(0);
  });

  it.each(['basic', 'session'] as const)('reports REDFISH_AUTH for a wrong password (%s) without leaking it', async (auth) => {
    const sim = await simulate(facts.tree);
    const error = await failureOf(clientFor(sim, { auth, password: `${PASSWORD}-wrong` }).getPowerState());
    expect(isRedfishError(error, 'REDFISH_AUTH')).toBe(true);
    expect(String((error as Error).message)).not.toContain(PASSWORD);
    expect((error as Error).name).toBe('RedfishError');
  });
});

describe('transport failures', () => {
  it('reports REDFISH_TIMEOUT when the machine does not settle within the power budget', async () => {
    const sim = await simulate('hpe-ilo5-dl325', { powerDelayMs: 1_000 });
    const client = clientFor(sim, { timing: { pollIntervalMs: 10, powerTimeoutMs: 100 } });
    const error = await failureOf(client.setPower('off'));
    expect(isRedfishError(error, 'REDFISH_TIMEOUT')).toBe(true);
  });

  it('reports REDFISH_UNAVAILABLE when nothing listens', async () => {
    const sim = await simulate('dmtf-public-tower');
    const url = sim.url;
    await sim.close();
    const error = await failureOf(clientFor(sim, { baseUrl: url }).getPowerState());
    expect(isRedfishError(error, 'REDFISH_UNAVAILABLE')).toBe(true);
  });
});
