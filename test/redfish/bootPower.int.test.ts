import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate, trees } from './harness.ts';

const bootPatches = (sim: Awaited<ReturnType<typeof simulate>>, systemUri: string) =>
  requestsTo(sim, 'PATCH', systemUri).map((r) => (r.body as { Boot: Record<string, unknown> }).Boot);

describe.each(trees)('boot override dialects on $tree', (facts) => {
  it('accepts a BMC that reads a Once request back as Continuous', async () => {
    const sim = await simulate(facts.tree, { dialect: { bootOverride: 'continuous' } });
    expect(await clientFor(sim).setOneTimeBoot('Pxe')).toMatchObject({ target: 'Pxe', enabled: 'Continuous' });
  });

  it('accepts a BMC that arms the override later, behind a 202 and a task', async () => {
    const sim = await simulate(facts.tree, { dialect: { bootOverride: 'deferred' }, taskDurationMs: 60 });
    expect(await clientFor(sim).setOneTimeBoot('Cd')).toMatchObject({ target: 'Cd', enabled: 'Once' });
    expect(requestsTo(sim, 'PATCH', facts.systemUri).map((r) => r.status)).toEqual([202]);
    expect(sim.state.bootOverride).toEqual({ target: 'Cd', enabled: 'Once' });
  });

  it('fails with REDFISH_BOOT_OVERRIDE_MISMATCH when the BMC answers 200 and keeps another target', async () => {
    const sim = await simulate(facts.tree, { dialect: { bootOverride: 'ignored' } });
    const started = Date.now();
    const error = await failureOf(clientFor(sim, { timing: { bootVerifyMs: 200 } }).setOneTimeBoot('Pxe'));
    expect(isRedfishError(error, 'REDFISH_BOOT_OVERRIDE_MISMATCH')).toBe(true);
    // It looked for the whole window before giving up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('sets UEFI only where the mode differs, and the enrolled Legacy mode where asked', async () => {
    const sim = await simulate(facts.tree);
    await clientFor(sim).setOneTimeBoot('Pxe');
    await clientFor(sim, { bootMode: 'Legacy' }).setOneTimeBoot('Pxe');
    expect(bootPatches(sim, facts.systemUri)).toEqual([
      { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' },
      { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once', BootSourceOverrideMode: 'Legacy' },
    ]);
    expect(sim.state.bootOverrideMode).toBe('Legacy');
  });

  it('keeps the mode the BIOS reports on an AMI board (no Legacy guessed from the vendor), and a per-command mode wins', async () => {
    const sim = await simulate(facts.tree, { dialect: { vendor: 'AMI' } });
    // Both trees' BIOS says `BootMode: Uefi`, which the override already reads: no mode is written.
    expect(await clientFor(sim).setOneTimeBoot('Pxe')).toMatchObject({ mode: 'UEFI' });
    expect(await clientFor(sim).setOneTimeBoot('Cd', 'Legacy')).toMatchObject({ mode: 'Legacy' });
    expect(bootPatches(sim, facts.systemUri).map((b) => b.BootSourceOverrideMode)).toEqual([undefined, 'Legacy']);
  });

  it('arms the override without the mode when the BMC refuses to have the mode written', async () => {
    const sim = await simulate(facts.tree, { dialect: { bootMode: 'readOnly' } });
    expect(await clientFor(sim, { bootMode: 'Legacy' }).setOneTimeBoot('Pxe')).toMatchObject({ target: 'Pxe', mode: 'UEFI' });
    expect(requestsTo(sim, 'PATCH', facts.systemUri).map((r) => r.status)).toEqual([400, 200]);
  });

  it('writes with If-Match: * when the BMC requires If-Match but publishes no ETag', async () => {
    const sim = await simulate(facts.tree, { dialect: { ifMatch: 'requiredUnpublished' } });
    await clientFor(sim).setOneTimeBoot('Pxe');
    expect(requestsTo(sim, 'PATCH', facts.systemUri).map((r) => [r.status, r.ifMatch])).toEqual([
      [428, undefined],
      [200, '*'],
    ]);
  });
});

describe.each(trees)('restart observation on $tree', (facts) => {
  it('sees a restart by its power transition', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 60 });
    expect(await clientFor(sim).setPower('cycle')).toMatchObject({ resetTypes: ['ForceRestart'], observed: 'powerState' });
    expect(sim.state.boots).toHaveLength(1);
  });

  it('sees a restart with no visible transition by LastResetTime', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 20, dialect: { restart: 'silent' } });
    expect(await clientFor(sim).setPower('cycle')).toMatchObject({ resetTypes: ['ForceRestart'], observed: 'resetEvidence' });
    expect(sim.state.boots).toHaveLength(1);
  });

  it('sees a traceless restart by the one-time override it consumed', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 20, dialect: { restart: 'traceless' } });
    const client = clientFor(sim);
    await client.setOneTimeBoot('Pxe');
    expect(await client.setPower('cycle')).toMatchObject({ resetTypes: ['ForceRestart'], observed: 'resetEvidence' });
    expect(sim.state.boots.map((b) => b.bootTarget)).toEqual(['Pxe']);
  });

  it('never reports an ignored restart as done: it powers the machine off and on instead', async () => {
    const sim = await simulate(facts.tree, { powerDelayMs: 10, dialect: { restart: 'ignored' } });
    const result = await clientFor(sim).setPower('cycle');
    expect(result).toMatchObject({ after: 'On', resetTypes: ['ForceRestart', 'ForceOff', 'On'], observed: 'offThenOn' });
    expect(sim.state.boots).toHaveLength(1);
  });

  it('fails with REDFISH_RESET_NOT_OBSERVED when a restart is ignored and no hard off is allowed', async () => {
    const sim = await simulate(facts.tree, {
      dialect: { restart: 'ignored' },
      systemOverrides: { Actions: { '#ComputerSystem.Reset': { 'ResetType@Redfish.AllowableValues': ['On', 'ForceRestart', 'GracefulShutdown'] } } },
    });
    const error = await failureOf(clientFor(sim).setPower('cycle'));
    expect(isRedfishError(error, 'REDFISH_RESET_NOT_OBSERVED')).toBe(true);
    expect(sim.state.boots).toHaveLength(0);
  });
});
