import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;
type CommandOutcome = { seq: number; duplicate: boolean; events: Array<{ type: string }> };
type Resources = { instances: number; vcpus: number; memoryMib: number; diskGib: number };

const int = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`not a non-negative integer: ${value}`);
  return n;
};
const path = (id: string) => encodeURIComponent(id);
// A tenant token's commands get its tenant written in by the API, so the CLI sends --tenant only when given.
const tenantOf = (o: { tenant?: string }) => (o.tenant ? { tenantId: o.tenant } : {});

/**
 * `vps tenants|quota|instances|create-instance|start|stop|delete|remediate|create-tenant|set-quota|create-pool|offer-pool|
 * create-flavor|map-flavor|create-account` (`pools` and `set-warm-pool`: `warmPoolCommands.ts`).
 */
export function addVpsCommands(vps: Command, api: () => ApiClient, print: Output): void {
  const send = async (name: string, body: unknown) => {
    const result = await api().command<CommandOutcome>(name, body);
    print(result, () => `${name}: ${result.events.map((e) => e.type).join(', ') || '(no change)'} (seq ${result.seq})`);
  };

  vps
    .command('tenants')
    .description('list tenants with their quota')
    .action(async () => {
      const page = await api().get<{ items: Array<{ tenantId: string; name: string; quota: { limit: Resources; used: Resources; reserved: Resources } }> }>(
        '/v1/tenants',
      );
      const rows = page.items.map((t) => ({
        tenantId: t.tenantId,
        name: t.name,
        instances: `${t.quota.used.instances}+${t.quota.reserved.instances}/${t.quota.limit.instances}`,
        vcpus: `${t.quota.used.vcpus}+${t.quota.reserved.vcpus}/${t.quota.limit.vcpus}`,
      }));
      print(page, () => table(rows, ['tenantId', 'name', 'instances', 'vcpus']));
    });
  vps
    .command('quota <tenantId>')
    .description("a tenant's quota: limit, used, reserved")
    .action(async (tenantId: string) => {
      const quota = await api().get<{ limit: Resources; used: Resources; reserved: Resources }>(`/v1/tenants/${path(tenantId)}/quota`);
      const rows = (['instances', 'vcpus', 'memoryMib', 'diskGib'] as const).map((d) => ({
        dimension: d,
        limit: quota.limit[d],
        used: quota.used[d],
        reserved: quota.reserved[d],
        free: quota.limit[d] - quota.used[d] - quota.reserved[d],
      }));
      print(quota, () => table(rows, ['dimension', 'limit', 'used', 'reserved', 'free']));
    });
  vps
    .command('instances')
    .description('list instances')
    .option('--tenant <tenantId>')
    .option('--pool <poolId>')
    .action(async (o: { tenant?: string; pool?: string }) => {
      const q = new URLSearchParams({ ...(o.tenant ? { tenantId: o.tenant } : {}), ...(o.pool ? { poolId: o.pool } : {}) });
      const page = await api().get<{ items: Array<Record<string, unknown>> }>(`/v1/vps/instances?${q.toString()}`);
      // A metal-pool instance's node (its placement); a provider pool's instances show none.
      const rows = page.items.map((i) => ({ ...i, node: (i.placement as { nodeId?: string } | null | undefined)?.nodeId ?? null }));
      print(page, () => table(rows, ['instanceId', 'tenantId', 'poolId', 'flavorId', 'state', 'desired', 'node', 'addresses', 'message']));
    });
  vps
    .command('create-instance <instanceId>')
    .description('create an instance (reserves quota)')
    .option('--tenant <tenantId>', 'tenant (implied by a tenant token)')
    .requiredOption('--pool <poolId>')
    .requiredOption('--flavor <flavorId>')
    .requiredOption('--image <image>')
    .requiredOption('--ssh-key <key...>', 'SSH public keys (the key text)')
    .option('--user-data <file>', 'cloud-init user data file')
    .action(async (instanceId: string, o: { tenant?: string; pool: string; flavor: string; image: string; sshKey: string[]; userData?: string }) => {
      const body = {
        ...tenantOf(o),
        instanceId,
        poolId: o.pool,
        flavorId: o.flavor,
        image: o.image,
        sshKeys: o.sshKey,
        ...(o.userData ? { userData: readFileSync(o.userData, 'utf8') } : {}),
      };
      await send('vps.createInstance', body);
    });
  for (const [verb, name, description] of [
    ['start', 'vps.startInstance', 'want an instance running'],
    ['stop', 'vps.stopInstance', 'want an instance stopped (its quota stays reserved)'],
    ['delete', 'vps.deleteInstance', 'delete an instance; its quota is released once it is gone'],
  ] as const) {
    vps
      .command(`${verb} <instanceId>`)
      .description(description)
      .option('--tenant <tenantId>', 'tenant (implied by a tenant token)')
      .action(async (instanceId: string, o: { tenant?: string }) => send(name, { ...tenantOf(o), instanceId }));
  }
  vps
    .command('remediate <instanceId>')
    .description('run a built-in or plugin profile (control-plane steps only) on a running or stopped instance, then return it to that state')
    .option('--tenant <tenantId>', 'tenant (implied by a tenant token)')
    .requiredOption('--profile <id>', 'the profile to run (a plugin profile whose steps run on the control plane)')
    .option('--allow-destructive', 'allow a profile with destructive steps (refused otherwise)')
    .action(async (instanceId: string, o: { tenant?: string; profile: string; allowDestructive?: boolean }) =>
      send('vps.remediateInstance', { ...tenantOf(o), instanceId, profile: o.profile, allowDestructive: o.allowDestructive === true }),
    );
  vps
    .command('create-tenant <tenantId>')
    .description('create a tenant (quota starts at zero)')
    .requiredOption('--name <name>')
    .action(async (tenantId: string, o: { name: string }) => send('vps.createTenant', { tenantId, name: o.name }));
  vps
    .command('set-quota <tenantId>')
    .description("set a tenant's quota limits")
    .requiredOption('--instances <n>', 'instances', int)
    .requiredOption('--vcpus <n>', 'vCPUs', int)
    .requiredOption('--memory-mib <n>', 'memory (MiB)', int)
    .requiredOption('--disk-gib <n>', 'disk (GiB)', int)
    .action(async (tenantId: string, o: { instances: number; vcpus: number; memoryMib: number; diskGib: number }) =>
      send('vps.setQuota', { tenantId, instances: o.instances, vcpus: o.vcpus, memoryMib: o.memoryMib, diskGib: o.diskGib }),
    );
  vps
    .command('set-tenant-caps <tenantId>')
    .description("cap a tenant's concurrent deploys and wipes across its sites (left out: the orchestrator's default per tenant)")
    .option('--deploys <n>', 'deploys in flight at once', int)
    .option('--wipes <n>', 'wipes (releases, retirements) in flight at once', int)
    .action(async (tenantId: string, o: { deploys?: number; wipes?: number }) =>
      send('vps.setTenantCaps', { tenantId, deploys: o.deploys ?? null, wipes: o.wipes ?? null }),
    );
  vps
    .command('create-pool <poolId>')
    .description('create a pool of provider or metal capacity')
    .requiredOption('--class <class>', 'provider or metal')
    .option('--agent <agent>', 'none or bcd', 'none')
    .option('--account <accountId>', 'provider account (provider pools)')
    .option('--site <siteId>', 'site (metal pools)')
    .option('--allow-unverified-release', 'metal: release nodes without an attested wipe')
    .option('--provisioning-cidr <cidr...>', 'metal: provisioning networks')
    .option('--runtime <driverId>', 'metal: the runtime its instances run on (placed only on nodes whose bcd node advertises it)')
    .action(
      async (
        poolId: string,
        o: {
          class: string;
          agent: string;
          account?: string;
          site?: string;
          allowUnverifiedRelease?: boolean;
          provisioningCidr?: string[];
          runtime?: string;
        },
      ) => {
        const policy =
          o.allowUnverifiedRelease || o.provisioningCidr
            ? { policy: { allowUnverifiedRelease: o.allowUnverifiedRelease === true, provisioningCidrs: o.provisioningCidr ?? [] } }
            : {};
        await send('vps.createPool', {
          poolId,
          class: o.class,
          agent: o.agent,
          ...(o.account ? { accountId: o.account } : {}),
          ...(o.site ? { siteId: o.site } : {}),
          ...(o.runtime ? { runtime: o.runtime } : {}),
          ...policy,
        });
      },
    );
  vps
    .command('offer-pool <poolId> <tenantId>')
    .description('let a tenant create instances in a pool')
    .action(async (poolId: string, tenantId: string) => send('vps.offerPool', { poolId, tenantId }));
  vps
    .command('withdraw-pool <poolId> <tenantId>')
    .description('stop a tenant creating instances in a pool (existing ones stay)')
    .action(async (poolId: string, tenantId: string) => send('vps.withdrawPool', { poolId, tenantId }));
  vps
    .command('create-flavor <flavorId>')
    .description('create an instance size')
    .requiredOption('--vcpus <n>', 'vCPUs', int)
    .requiredOption('--memory-mib <n>', 'memory (MiB)', int)
    .requiredOption('--disk-gib <n>', 'disk (GiB)', int)
    .action(async (flavorId: string, o: { vcpus: number; memoryMib: number; diskGib: number }) =>
      send('vps.createFlavor', { flavorId, vcpus: o.vcpus, memoryMib: o.memoryMib, diskGib: o.diskGib }),
    );
  vps
    .command('map-flavor <flavorId> <poolId> <offerId>')
    .description("sell a flavor in a pool as a provider's offer")
    .action(async (flavorId: string, poolId: string, offerId: string) => send('vps.mapFlavor', { flavorId, poolId, offerId }));
  vps
    .command('create-account <accountId>')
    .description('create a provider account; store its token first with PUT /v1/secrets/<id> (kind provider-token)')
    .requiredOption('--provider <providerId>')
    .requiredOption('--region <region>')
    .requiredOption('--token-secret <secretId>', 'the sealed secret holding the API token')
    .option('--config <key=value...>', 'provider-specific, non-secret settings')
    .action(async (accountId: string, o: { provider: string; region: string; tokenSecret: string; config?: string[] }) => {
      const config = Object.fromEntries((o.config ?? []).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
      await send('vps.createProviderAccount', { accountId, providerId: o.provider, region: o.region, tokenSecretId: o.tokenSecret, config });
    });
}
