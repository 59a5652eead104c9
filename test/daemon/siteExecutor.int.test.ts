import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedfishClient } from '../../daemon/redfish/index.ts';
import { PxeArms } from '../../daemon/site/pxe/pxeArms.ts';
import { AgentCommandParams, type AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { startBmcSimulator, type BmcSimulator, type BmcSimulatorOptions } from '../../daemon/simulator/bmc/index.ts';
import { siteExecutor } from '../../daemon/site/siteExecutor.ts';
import { agentErrorCodeOf } from '../../daemon/agent/errors.ts';
import { permanentAgentFailures } from '../../schemas/agent/permanentFailures.ts';
import { agentCommand } from './harness.ts';

const PASSWORD = 'site-exec-Pa55';
const simulators: BmcSimulator[] = [];
afterEach(async () => {
  for (const sim of simulators.splice(0)) await sim.close();
});

async function bmc(options: Partial<BmcSimulatorOptions> = {}) {
  const sim = await startBmcSimulator({ tree: 'dmtf-public-tower', username: 'admin', password: PASSWORD, powerDelayMs: 5, ...options });
  simulators.push(sim);
  return sim;
}

/** The executor of site dc1 with one credential, logging into `lines`. */
function executor(lines: string[], pxe?: PxeArms) {
  const log = createLogger('site-exec-test', 'warn', { write: (line: string) => void lines.push(line) });
  return siteExecutor({
    ...(pxe ? { pxe } : {}),
    siteId: 'dc1',
    credentials: { resolve: async () => ({ username: 'admin', password: PASSWORD }) },
    redfish: { timeoutMs: 3_000, timing: { pollIntervalMs: 5, resetObserveMs: 500, bootVerifyMs: 500 } },
    log,
  });
}

const run = (lines: string[], command: AgentCommand, pxe?: PxeArms) =>
  executor(lines, pxe).execute(command, AgentCommandParams[command.kind].parse(command.params), {
    heartbeat: () => undefined,
    signal: new AbortController().signal,
  });

describe('site executor: per-node BMC options', () => {
  it('logs a warning at every use of a node enrolled with insecure TLS, and never otherwise', async () => {
    const sim = await bmc({ tls: true });
    const lines: string[] = [];
    const insecure = { address: sim.url, credentialsRef: 'secret:n1', tls: { mode: 'insecure' as const } };
    for (let i = 0; i < 2; i += 1) expect(await run(lines, agentCommand('power.get', { bmc: insecure }))).toEqual({ powerState: 'On' });
    const warnings = lines.filter((l) => l.includes('not verified'));
    expect(warnings).toHaveLength(2);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ nodeId: 'n1', bmc: sim.url, kind: 'power.get' });
    expect(warnings.join('')).not.toContain(PASSWORD);

    const pinned = { address: sim.url, credentialsRef: 'secret:n1', tls: { mode: 'pin' as const, spkiSha256: sim.spkiSha256! } };
    const before = lines.length;
    await run(lines, agentCommand('power.get', { bmc: pinned }));
    expect(lines).toHaveLength(before);
    // No option at all: the self-signed certificate is refused.
    await expect(run(lines, agentCommand('power.get', { bmc: { address: sim.url, credentialsRef: 'secret:n1' } }))).rejects.toMatchObject({
      code: 'REDFISH_TLS_PIN_MISMATCH',
    });
  });

  it('authenticates as the enrolment says: auto (a session here), or forced Basic', async () => {
    const sim = await bmc();
    await run([], agentCommand('power.get', { bmc: { address: sim.url, credentialsRef: 'secret:n1' } }));
    await run([], agentCommand('power.get', { bmc: { address: sim.url, credentialsRef: 'secret:n1', auth: 'basic' } }));
    expect(sim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/Sessions'))).toHaveLength(1);
    expect(new Set(sim.requestLog.map((r) => r.auth))).toEqual(new Set(['none', 'session', 'basic']));
  });

  it('boots in the enrolled mode unless the command names one', async () => {
    const sim = await bmc();
    const node = { address: sim.url, credentialsRef: 'secret:n1', bootMode: 'Legacy' as const };
    expect(await run([], agentCommand('boot.setOnce', { bmc: node, params: { target: 'Pxe' } }))).toMatchObject({ target: 'Pxe', mode: 'Legacy' });
    expect(await run([], agentCommand('boot.setOnce', { bmc: node, params: { target: 'Pxe', mode: 'UEFI' } }))).toMatchObject({ mode: 'UEFI' });
  });

  it('arms network boot for the MACs the BMC reports at boot.setOnce Pxe, and disarms at any other target', async () => {
    const sim = await bmc();
    const state = mkdtempSync(join(tmpdir(), 'bc-arms-'));
    try {
      const arms = new PxeArms(state);
      const node = { address: sim.url, credentialsRef: 'secret:n1' };
      const macs = (
        await createRedfishClient({ baseUrl: sim.url, username: 'admin', password: PASSWORD, auth: 'basic', timeoutMs: 3_000 }).getInventory()
      ).nics.map((n) => n.mac);
      expect(macs.length).toBeGreaterThan(0);
      expect(arms.nodeOf(macs[0]!)).toBeUndefined();
      await run([], agentCommand('boot.setOnce', { bmc: node, params: { target: 'Pxe' } }), arms);
      for (const mac of macs) expect(arms.nodeOf(mac)).toEqual({ nodeId: 'n1' });
      await run([], agentCommand('boot.setOnce', { bmc: node, params: { target: 'Cd' } }), arms);
      expect(arms.nodeOf(macs[0]!)).toBeUndefined();
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });

  it('ends the network boot at boot.clear: disarms the node, and sets the override the AMI BMC kept as Continuous back to none', async () => {
    const sim = await bmc({ tree: 'gigabyte-ami-h262', dialect: 'ami-megarac' });
    const state = mkdtempSync(join(tmpdir(), 'bc-arms-'));
    try {
      const arms = new PxeArms(state);
      const node = { address: sim.url, credentialsRef: 'secret:n1' };
      expect(await run([], agentCommand('boot.setOnce', { bmc: node, params: { target: 'Pxe' } }), arms)).toMatchObject({ enabled: 'Continuous' });
      expect(arms.armed()).toEqual(['n1']);
      expect(await run([], agentCommand('boot.clear', { bmc: node }), arms)).toEqual({ changed: true, before: { target: 'Pxe', enabled: 'Continuous' } });
      expect(arms.armed()).toEqual([]);
      expect(sim.state.bootOverride).toEqual({ target: 'None', enabled: 'Disabled' });
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });

  it('reports what the outside trees refuse under codes the control plane does not retry', async () => {
    const fail = (command: AgentCommand) =>
      run([], command).then(
        () => 'succeeded',
        (error: unknown) => agentErrorCodeOf(error),
      );
    // OpenBMC offers no SimpleUpdate (HttpPushUri only).
    const openbmc = await bmc({ tree: 'openbmc-stock' });
    const firmware = agentCommand('firmware.update', {
      bmc: { address: openbmc.url, credentialsRef: 'secret:n1' },
      params: { imageUrl: 'http://127.0.0.1:9/fw.bin' },
    });
    // An AMI BMC that answers 200 to the override and keeps its own.
    const ami = await bmc({ tree: 'gigabyte-ami-h262', dialect: { bootOverride: 'ignored' } });
    const boot = agentCommand('boot.setOnce', { bmc: { address: ami.url, credentialsRef: 'secret:n1' }, params: { target: 'Pxe' } });
    const codes = [await fail(firmware), await fail(boot)];
    expect(codes).toEqual(['REDFISH_UNSUPPORTED', 'REDFISH_BOOT_OVERRIDE_MISMATCH']);
    expect(codes.every((code) => permanentAgentFailures.has(code))).toBe(true);
  });

  it('drives the system the address names on a multi-system BMC', async () => {
    const sim = await bmc({ systems: 2 });
    await run([], agentCommand('power.set', { bmc: { address: sim.addressOf(sim.systems[1]!), credentialsRef: 'secret:n1' }, params: { action: 'off' } }));
    expect(sim.systems.map((s) => s.state.powerState)).toEqual(['On', 'Off']);
  });
});

describe('site executor: bios.apply and raid.apply', () => {
  it('applies Name=Value BIOS settings through a reset, and RAID volumes from their string form', async () => {
    const sim = await bmc();
    const node = { address: sim.url, credentialsRef: 'secret:n1' };
    const bios = await run([], agentCommand('bios.apply', { bmc: node, params: { attributes: ['ProcTurboMode=Disabled', 'ProcCoreDisable=2'] } }));
    expect(bios).toMatchObject({ changed: true, attributes: { ProcTurboMode: 'Disabled', ProcCoreDisable: 2 } });
    expect(sim.state.boots).toHaveLength(1);
    const raid = await run([], agentCommand('raid.apply', { bmc: node, params: { create: ['boot:RAID1:Disk-1-6,Disk-1-7'] } }));
    expect(raid).toMatchObject({ created: [{ name: 'boot', raidType: 'RAID1' }] });
  });
});
