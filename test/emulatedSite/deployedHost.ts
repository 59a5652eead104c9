import type { NatsConnection } from '@nats-io/transport-node';
import { expect } from 'vitest';
import type { ImageBuild } from '../../scripts/emulatedSite/buildImage.ts';
import type { EmulatedMachine } from '../../scripts/emulatedSite/emulatedSite.ts';
import type { apiClient } from '../support/apiClient.ts';
import { workflowSteps } from '../support/deployEvidence.ts';
import type { DeployUserData } from './deployUserData.ts';
import { waitForLog } from './harness.ts';
import { allZero, BOOT_PREFIX, diskHolds, imageOnDisk, nodeAgentPulling } from './hostEvidence.ts';

export interface HostCheckContext {
  client: ReturnType<typeof apiClient>;
  nc: NatsConnection;
  siteId: string;
  /** The stack's data dir (its read models). */
  dataDir: string;
  image: ImageBuild;
  imageBytes: Buffer;
  /** Where the site fetches the image from. */
  imageUrl: string;
}

/**
 * The emulated-site e2e's deploy, release and the checks of a deployed host, each against the real VM: what its disk
 * holds (read from the host side), its serial console, its `bcd node`'s heartbeats and the workflow's steps.
 */
export function hostChecks({ client, nc, siteId, dataDir, image, imageBytes, imageUrl }: HostCheckContext) {
  /**
   * The deployed host booted its disk and its `bcd node` joined with the seed the deploy wrote: the node view
   * counts it connected, its durable has a pull waiting, and the host's init zeroed the spent seed.
   */
  const nodeJoined = async (vm: EmulatedMachine) => {
    await waitForLog(`${vm.id}'s bcd node joins`, vm.system.vm.paths.serial, /bc-host: seed wiped after joining/, 300_000);
    // connected: its bcd node's heartbeats reach the API (not merely: an agent of the node registered once).
    await expect.poll(async () => (await client.node(vm.id)).connected, { timeout: 60_000, interval: 1_000 }).toBe(true);
    // The agent pulls once its consumer loop is up, after it registered: inside a VM on a machine running the whole
    // suite, that took over a minute once.
    await expect.poll(() => nodeAgentPulling(nc, siteId, vm.id), { timeout: 180_000, interval: 1_000 }).toBe(true);
    expect((await client.node(vm.id)).state).toBe('deployed');
  };

  const deploy = async (vm: EmulatedMachine, seed: DeployUserData) => {
    const res = await client.command('metal.deploy', {
      nodeId: vm.id,
      imageUrl,
      imageSha256: image.sha256,
      role: 'host',
      sshKeys: [seed.sshKey],
      userData: seed.userData,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.events.find((e: { type: string }) => e.type === 'NodeOperationRequested').data.workflowId as string;
  };
  const release = async (vm: EmulatedMachine) => {
    const res = await client.command('metal.undeploy', { nodeId: vm.id });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await client.waitForNodeState(vm.id, 'ready', 480_000, 1_000);
    for (const disk of vm.disks) expect(await allZero(disk), `${vm.id}: ${disk} reads back as zeros after the release`).toBe(true);
  };

  /** The deploy ended well: the image and the seed are on /dev/vda, no ForceOff in its power steps, the host booted its disk. */
  const deployed = async (vm: EmulatedMachine, workflowId: string, seed: DeployUserData) => {
    await client.waitForNodeState(vm.id, 'deployed', 900_000, 1_000);
    const { steps } = workflowSteps(dataDir, workflowId);
    const written = steps.find((s) => s.step_id === 'image.write');
    expect(JSON.parse(written!.output!)).toMatchObject({ disk: '/dev/vda', sha256: image.sha256, bytesWritten: imageBytes.length, verified: true });
    const seeded = steps.find((s) => s.step_id === 'userdata.write');
    expect(JSON.parse(seeded!.output!)).toMatchObject({ seed: { written: true, disk: '/dev/vda', verified: true } });
    // From the host side: the boot partition is the image's bytes (the table also lists the NoCloud seed's partition),
    // and the key and the user data are on the disk itself (not in a file of the ramdisk's devtmpfs).
    expect(imageOnDisk(vm.disk, imageBytes.subarray(0, BOOT_PREFIX)), `${vm.id}: the image is on the disk`).toBe(true);
    expect(await diskHolds(vm.disk, seed.sshKey), `${vm.id}: the SSH key is on the disk`).toBe(true);
    expect(await diskHolds(vm.disk, seed.onDisk), `${vm.id}: the user data is on the disk`).toBe(true);
    // The deploy's last power cycle was seen happening (the VM BMC's LastResetTime): no ForceOff + On booted the host
    // a second time under its agent's feet.
    const resetTypes = steps.filter((st) => st.step_id === 'power.set').flatMap((st) => (JSON.parse(st.output!) as { resetTypes: string[] }).resetTypes);
    expect(resetTypes).not.toContain('ForceOff');
    await waitForLog(`${vm.id} boots its disk`, vm.system.vm.paths.serial, /SYSLINUX/, 120_000);
  };
  /** cloud-init applied this deploy's seed at the host's first boot: the key in root's authorized_keys, runcmd ran. */
  const cloudInitApplied = async (vm: EmulatedMachine, seed: DeployUserData) => {
    const serial = await waitForLog(`${vm.id}'s cloud-init result`, vm.system.vm.paths.serial, /bc-host: cloud-init result [^\n]*\n/, 480_000);
    expect(serial).toMatch(/bc-host: cloud-init status: done /);
    expect(serial).toMatch(/bc-host: cloud-init result \{.*"datasource": "DataSourceNoCloud \[seed=\/dev\/vda\d\]/);
    expect(serial).toMatch(/bc-host: cloud-init result \{.*"errors": \[\]/);
    expect(serial).toMatch(seed.appliedLine);
    expect(serial).not.toMatch(/bc-host: cloud-init .* exited with status/);
  };
  /** Alive all along, on the same agent process: no crash loop, no restart, no error since it joined. */
  const stillAlive = async (vm: EmulatedMachine, joined: { startedAt: string }) => {
    const now = await client.node(vm.id);
    expect(now).toMatchObject({ connected: true, lastHeartbeat: { agentId: `node-${vm.id}`, role: 'node', lastError: null } });
    expect(now.lastHeartbeat.startedAt).toBe(joined.startedAt);
  };
  return { nodeJoined, deploy, release, deployed, cloudInitApplied, stillAlive };
}
