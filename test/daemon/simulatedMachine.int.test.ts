import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedSite, type SimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { agentCommand, log, serveBytes, startAgentBackbone } from './harness.ts';

describe('simulated site with bcd site and PXE-booted ramdisks', () => {
  let env: Awaited<ReturnType<typeof startAgentBackbone>>;
  let site: SimulatedSite;
  const enrolled: { nodeId: string; bmc: { address: string; credentialsRef: string } }[] = [];

  beforeAll(async () => {
    env = await startAgentBackbone();
    // Stand-ins for the control plane's commands the simulated site sends.
    env.nc.subscribe(Subjects.command('site.create'), {
      callback: (_e, msg) =>
        void msg.respond(
          JSON.stringify({ ok: true, result: { commandId: 'x', aggregate: { type: 'site', id: 'dc1' }, seq: 1, duplicate: false, events: [] } }),
        ),
    });
    env.nc.subscribe(Subjects.command('metal.enroll'), {
      callback: (_e, msg) => {
        enrolled.push(msg.json());
        msg.respond(JSON.stringify({ ok: true, result: { commandId: 'x', aggregate: { type: 'node', id: 'n' }, seq: 1, duplicate: false, events: [] } }));
      },
    });
    site = await startSimulatedSite(
      env.nc,
      { siteId: 'dc1', machines: 2, bmcPortBase: 0, dataDir: join(env.dir, 'sim'), diskSizeBytes: 8 << 20, bmcDelayMs: 20 },
      log,
    );
    await site.siteAgent!.registered;
  });
  afterAll(async () => {
    await site?.stop();
    await env?.[Symbol.asyncDispose]();
  });

  const siteCommand = (kind: 'power.set' | 'boot.setOnce', nodeId: string, params: Record<string, unknown>) => {
    const machine = enrolled.find((e) => e.nodeId === nodeId)!;
    return agentCommand(kind, { nodeId, params, bmc: machine.bmc });
  };

  it('runs a registered site agent with every BMC credential resolvable', async () => {
    expect(env.registrations.map((r) => r.agentId)).toContain('site-dc1');
    expect(enrolled.map((e) => e.nodeId)).toEqual(['dc1-m001', 'dc1-m002']);
    const inventory = agentCommand('inventory.read', { nodeId: 'dc1-m002', bmc: enrolled[1]!.bmc });
    await env.publish(inventory);
    expect(await env.result(inventory)).toMatchObject({ ok: true, result: { ok: true } });
  });

  it('has no iPXE URL for a machine before a reset into the ramdisk', () => {
    expect(site.siteAgent!.bootUrlFor('dc1-m001')).toBeUndefined();
    expect(site.siteAgent!.bootUrlFor('dc1-m002')).toBeUndefined();
  });

  it('PXE-boots a machine into a ramdisk that registers, wipes and images its disk, and stops on power off', async () => {
    const machine = site.machines[0]!;
    const boot = siteCommand('boot.setOnce', machine.nodeId, { target: 'Pxe' });
    await env.publish(boot);
    expect(await env.result(boot)).toMatchObject({ ok: true, result: { ok: true } });
    const cycle = siteCommand('power.set', machine.nodeId, { action: 'cycle' });
    await env.publish(cycle);
    expect(await env.result(cycle)).toMatchObject({ ok: true, result: { ok: true } });

    const ramdisk = await machine.ramdiskStarted();
    await ramdisk.registered;
    expect(machine.runState).toBe('ramdisk');
    expect(machine.bootScripts[0]).toContain(`bc.node=${machine.nodeId}`);
    expect(env.registrations).toContainEqual(expect.objectContaining({ agentId: ramdisk.agentId, role: 'ramdisk', nodeId: machine.nodeId, siteId: 'dc1' }));

    const wipe = agentCommand('disk.wipe', { nodeId: machine.nodeId });
    await env.publish(wipe);
    expect(await env.result(wipe)).toMatchObject({ ok: true, result: { ok: true, agentId: ramdisk.agentId } });
    expect(readFileSync(machine.disks[0]!).every((b) => b === 0)).toBe(true);

    const image = randomBytes(300_000);
    await using upstream = await serveBytes(image);
    const imageUrl = site.siteAgent!.cacheImage(upstream.url, upstream.sha256);
    const write = agentCommand('image.write', { nodeId: machine.nodeId, params: { imageUrl, sha256: upstream.sha256 } });
    await env.publish(write);
    expect(await env.result(write)).toMatchObject({ ok: true, result: { ok: true, payload: { verified: true, sha256: upstream.sha256 } } });
    expect(readFileSync(machine.disks[0]!).subarray(0, image.length).equals(image)).toBe(true);
    expect(upstream.requests).toBe(1);

    // Named by its upstream URL, the image still comes through the site agent's verified cache.
    const other = randomBytes(200_000);
    await using upstream2 = await serveBytes(other);
    const direct = agentCommand('image.write', { nodeId: machine.nodeId, params: { imageUrl: upstream2.url, sha256: upstream2.sha256 } });
    await env.publish(direct);
    expect(await env.result(direct)).toMatchObject({
      ok: true,
      result: { ok: true, payload: { source: `${site.siteAgent!.httpUrl}/images/${upstream2.sha256}` } },
    });
    expect(readFileSync(machine.disks[0]!).subarray(0, other.length).equals(other)).toBe(true);

    const off = siteCommand('power.set', machine.nodeId, { action: 'off' });
    await env.publish(off);
    expect(await env.result(off)).toMatchObject({ ok: true, result: { ok: true } });
    await expect.poll(() => machine.runState).toBe('off');
    expect(machine.ramdisk).toBeUndefined();

    // Booting from disk now finds the written image: the machine runs its OS, no ramdisk.
    const on = siteCommand('power.set', machine.nodeId, { action: 'on' });
    await env.publish(on);
    await env.result(on);
    await expect.poll(() => machine.runState).toBe('os');
  });
});
