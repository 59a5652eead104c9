import { expect } from 'vitest';
import type { EmulatedMachine } from '../../scripts/emulatedSite/emulatedSite.ts';
import type { apiClient } from '../support/apiClient.ts';
import { SSH_KEY } from '../vps/vpsPayloads.ts';

export interface ContainerInstanceContext {
  client: ReturnType<typeof apiClient>;
  siteId: string;
  vms: readonly EmulatedMachine[];
}

type HostReport = { id: string; runtime: string; desiredState: string; state: string };
const POLL = { timeout: 240_000, interval: 2_000 };
const TENANT = 'emu-tenant';
const INSTANCE = 'box-1';

/**
 * Issue 36 on the deployed VMs: a tenant's instance in a metal pool of the site whose runtime is the crun plugin the
 * host image carries (`scripts/emulatedSite/containerRuntime.ts`), image `busybox`. VPS places it on a deployed VM
 * whose `bcd node` advertises the runtime, that host runs it as a container, and it is stopped, started and deleted
 * there. Checked where each party meets it: the tenant's instance view, and the host's own signed heartbeat.
 */
export async function containerOnDeployedHost(ctx: ContainerInstanceContext): Promise<void> {
  const { client } = ctx;
  const run = async (name: string, payload: unknown) => {
    const { status, body } = await client.command(name, payload);
    expect(status, `${name}: ${JSON.stringify(body)}`).toBe(201);
  };
  // The VM's disk is 1 GiB and a bit: whole GiB are what placement counts.
  await run('vps.createFlavor', { flavorId: 'box', vcpus: 1, memoryMib: 64, diskGib: 1 });
  await run('vps.createPool', { poolId: 'emu-containers', class: 'metal', agent: 'bcd', siteId: ctx.siteId, runtime: 'crun' });
  await run('vps.mapFlavor', { flavorId: 'box', poolId: 'emu-containers', offerId: 'box' });
  await run('vps.createTenant', { tenantId: TENANT, name: 'Emulated tenant' });
  await run('vps.setQuota', { tenantId: TENANT, instances: 2, vcpus: 2, memoryMib: 1_024, diskGib: 4 });
  await run('vps.offerPool', { poolId: 'emu-containers', tenantId: TENANT });
  await run('vps.createInstance', {
    tenantId: TENANT,
    instanceId: INSTANCE,
    poolId: 'emu-containers',
    flavorId: 'box',
    image: 'busybox',
    sshKeys: [SSH_KEY],
    userData: '#!/bin/sh\necho box-1\n',
  });

  const instance = async () =>
    (
      (await client.getJson(`/v1/vps/instances?tenantId=${TENANT}`)).items as {
        instanceId: string;
        state: string;
        message?: string;
        placement?: { nodeId: string };
      }[]
    ).find((i) => i.instanceId === INSTANCE);
  const onHost = async (nodeId: string) => (((await client.node(nodeId)).lastHeartbeat?.instances ?? []) as HostReport[]).find((r) => r.id === INSTANCE);
  // Settled one way or the other; an instance in error shows why, with what the hosts' agents printed.
  await expect.poll(async () => (await instance())?.state, POLL).not.toMatch(/^(pending|provisioning)$/);
  const settled = await instance();
  if (settled?.state !== 'running') {
    const lines = await Promise.all(
      ctx.vms.map(async (vm) =>
        ((await client.getJson(`/v1/nodes/${vm.id}/logs?limit=40`)).items as { source: string; text: string }[]).map((l) => `${vm.id} ${l.source}: ${l.text}`),
      ),
    );
    expect.fail(`instance ${JSON.stringify(settled)}\n${lines.flat().join('\n')}`);
  }
  const nodeId = settled.placement!.nodeId;
  expect(ctx.vms.map((vm) => vm.id)).toContain(nodeId);
  expect((await client.node(nodeId)).labels).toMatchObject({ 'bc.dev/driver.crun': expect.any(String) });
  await expect.poll(() => onHost(nodeId), POLL).toMatchObject({ runtime: 'crun', desiredState: 'running', state: 'running' });

  await run('vps.stopInstance', { tenantId: TENANT, instanceId: INSTANCE });
  await expect.poll(async () => (await instance())?.state, POLL).toBe('stopped');
  await expect.poll(async () => (await onHost(nodeId))?.state, POLL).toBe('stopped');
  await run('vps.startInstance', { tenantId: TENANT, instanceId: INSTANCE });
  await expect.poll(async () => (await onHost(nodeId))?.state, POLL).toBe('running');
  await expect.poll(async () => (await instance())?.state, POLL).toBe('running');

  await run('vps.deleteInstance', { tenantId: TENANT, instanceId: INSTANCE });
  await expect.poll(async () => (await instance())?.state, POLL).toBe('deleted');
  await expect.poll(() => onHost(nodeId), POLL).toBeUndefined();
}
