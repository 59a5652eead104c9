import type { CommandBus } from '../../services/platform/commands/commandBus.ts';

/** An OpenSSH public key line (shape only: nothing ever connects with it). */
export const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk9c2W0v0t1aD3z5kq9O2p8Q1m4Y6r7T8u9V0w1X2y3 tenant@laptop';

export const quotaOf = (instances: number, vcpus: number, memoryMib: number, diskGib: number) => ({ instances, vcpus, memoryMib, diskGib });

export const instancePayload = (tenantId: string, instanceId: string, flavorId = 'small', poolId = 'metal-a') => ({
  tenantId,
  instanceId,
  poolId,
  flavorId,
  image: 'ubuntu-24.04',
  sshKeys: [SSH_KEY],
});

/** Flavor sizes the tests create: `small` 1 vCPU, `medium` 2, `large` 4. */
export const flavors = {
  small: { vcpus: 1, memoryMib: 1_024, diskGib: 10 },
  medium: { vcpus: 2, memoryMib: 4_096, diskGib: 40 },
  large: { vcpus: 4, memoryMib: 8_192, diskGib: 80 },
} as const;

/**
 * A site, a metal pool `metal-a` offered to each tenant, the three flavors mapped onto it, and the tenants with
 * their quota. Metal pools need no provider account, so no secret is involved.
 */
export async function provisionMetalPool(bus: CommandBus, tenants: Record<string, ReturnType<typeof quotaOf>>): Promise<void> {
  const run = (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'setup' });
  await run('site.create', { siteId: 'dc1', name: 'DC 1' });
  await run('vps.createPool', { poolId: 'metal-a', class: 'metal', agent: 'bcd', siteId: 'dc1', policy: { provisioningCidrs: ['10.0.0.0/24'] } });
  for (const [flavorId, size] of Object.entries(flavors)) {
    await run('vps.createFlavor', { flavorId, ...size });
    await run('vps.mapFlavor', { flavorId, poolId: 'metal-a', offerId: `hw-${flavorId}` });
  }
  for (const [tenantId, quota] of Object.entries(tenants)) {
    await run('vps.createTenant', { tenantId, name: `Tenant ${tenantId}` });
    await run('vps.setQuota', { tenantId, ...quota });
    await run('vps.offerPool', { poolId: 'metal-a', tenantId });
  }
}
