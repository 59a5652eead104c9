import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { vpsMigrations } from './schema.ts';

/** A reservation counts as used from the instance's first `running` observation on, until it is released. */
const USED_ONCE_RUNNING = `quota_status = CASE quota_status WHEN 'reserved' THEN 'used' ELSE quota_status END`;

/**
 * The `vps` read model: tenants and their quota, instances with their reservation, desired and observed state,
 * the node a metal-pool instance is placed on (and why, from its `InstancePlaced`, until `InstanceUnplaced`), pools and
 * who they are offered to, flavors and their offers, provider accounts (the token secret's id, never a token). Used and
 * reserved quota are summed from the instances' `quota_status`, so they cannot drift from the rows.
 */
export const vpsProjection = defineProjection({
  name: 'vps',
  migrations: vpsMigrations,
  apply(db, event, metadata, position) {
    const time = metadata.time;
    const seq = position.seq;
    const updateInstance = (tenantId: string, instanceId: string, set: string, values: Record<string, unknown>) =>
      statement(db, `UPDATE vps_instances SET ${set}, updated_at = @time, last_seq = @seq WHERE tenant_id = @tenantId AND instance_id = @instanceId`).run({
        ...values,
        tenantId,
        instanceId,
        time,
        seq,
      });
    switch (event.type) {
      case 'TenantCreated':
        statement(db, 'INSERT INTO vps_tenants (tenant_id, name, created_at, updated_at, last_seq) VALUES (?, ?, ?, ?, ?)').run(
          event.data.tenantId,
          event.data.name,
          time,
          time,
          seq,
        );
        return;
      case 'TenantQuotaSet': {
        const d = event.data;
        statement(
          db,
          `UPDATE vps_tenants SET quota_instances = @instances, quota_vcpus = @vcpus, quota_memory_mib = @memoryMib, quota_disk_gib = @diskGib,
             updated_at = @time, last_seq = @seq WHERE tenant_id = @tenantId`,
        ).run({ ...d, time, seq });
        return;
      }
      case 'InstanceRequested': {
        const d = event.data;
        // userData may hold anything the tenant put there; the read model keeps only whether there is some.
        statement(
          db,
          `INSERT INTO vps_instances (tenant_id, instance_id, pool_id, flavor_id, image, ssh_keys, has_user_data, instances, vcpus, memory_mib, disk_gib,
             quota_status, requested_at, updated_at, last_seq)
           VALUES (@tenantId, @instanceId, @poolId, @flavorId, @image, @sshKeys, @hasUserData, @instances, @vcpus, @memoryMib, @diskGib, 'reserved', @time, @time, @seq)`,
        ).run({
          tenantId: d.tenantId,
          instanceId: d.instanceId,
          poolId: d.poolId,
          flavorId: d.flavorId,
          image: d.image,
          sshKeys: JSON.stringify(d.sshKeys),
          hasUserData: d.userData === null ? 0 : 1,
          ...d.resources,
          time: d.requestedAt,
          seq,
        });
        return;
      }
      // Logs written before the reconciler stopped sending `vps.markQuotaUsed` hold this event.
      case 'QuotaUsed':
        updateInstance(event.data.tenantId, event.data.instanceId, USED_ONCE_RUNNING, {});
        return;
      case 'QuotaReleased':
        updateInstance(event.data.tenantId, event.data.instanceId, `quota_status = 'released'`, {});
        return;
      case 'InstanceDesiredStateSet':
        updateInstance(event.data.tenantId, event.data.instanceId, 'desired = @desired', { desired: event.data.desired });
        return;
      case 'InstanceObserved': {
        const d = event.data;
        updateInstance(
          d.tenantId,
          d.instanceId,
          `observed = @observed, provider_instance_id = @providerInstanceId, addresses = @addresses, message = @message${d.observed === 'running' ? `, ${USED_ONCE_RUNNING}` : ''}`,
          {
            observed: d.observed,
            providerInstanceId: d.providerInstanceId,
            addresses: JSON.stringify(d.addresses),
            message: d.message,
          },
        );
        return;
      }
      case 'PoolCreated': {
        const d = event.data;
        statement(
          db,
          'INSERT INTO vps_pools (pool_id, class, agent, account_id, site_id, policy, runtime, created_at, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        ).run(d.poolId, d.class, d.agent, d.accountId, d.siteId, JSON.stringify(d.policy), d.runtime ?? null, time, seq);
        return;
      }
      case 'PoolWarmSet': {
        const { flavors, maxSlotAgeSeconds } = event.data;
        const warm = { flavors: flavors.map(({ flavorId, image, count }) => ({ flavorId, image, count })), maxSlotAgeSeconds };
        statement(db, 'UPDATE vps_pools SET warm = ?, last_seq = ? WHERE pool_id = ?').run(JSON.stringify(warm), seq, event.data.poolId);
        return;
      }
      case 'WarmSlotPlaced': {
        const d = event.data;
        statement(
          db,
          'INSERT OR REPLACE INTO vps_warm_slots (slot_id, site_id, pool_id, flavor_id, image, node_id, placed_at, ready_at, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)',
        ).run(d.slotId, d.siteId, d.poolId, d.flavorId, d.image, d.nodeId, d.placedAt, seq);
        return;
      }
      case 'WarmSlotReady':
        statement(db, 'UPDATE vps_warm_slots SET ready_at = ?, last_seq = ? WHERE slot_id = ?').run(event.data.readyAt, seq, event.data.slotId);
        return;
      case 'WarmSlotReaped':
        statement(db, 'DELETE FROM vps_warm_slots WHERE slot_id = ?').run(event.data.slotId);
        return;
      case 'PoolOffered':
        statement(db, 'INSERT OR IGNORE INTO vps_pool_offers (pool_id, tenant_id) VALUES (?, ?)').run(event.data.poolId, event.data.tenantId);
        return;
      case 'PoolWithdrawn':
        statement(db, 'DELETE FROM vps_pool_offers WHERE pool_id = ? AND tenant_id = ?').run(event.data.poolId, event.data.tenantId);
        return;
      case 'FlavorCreated': {
        const d = event.data;
        statement(db, 'INSERT INTO vps_flavors (flavor_id, vcpus, memory_mib, disk_gib, created_at, last_seq) VALUES (?, ?, ?, ?, ?, ?)').run(
          d.flavorId,
          d.vcpus,
          d.memoryMib,
          d.diskGib,
          time,
          seq,
        );
        return;
      }
      case 'FlavorMapped':
        statement(
          db,
          'INSERT INTO vps_flavor_offers (flavor_id, pool_id, offer_id) VALUES (@flavorId, @poolId, @offerId) ON CONFLICT (flavor_id, pool_id) DO UPDATE SET offer_id = @offerId',
        ).run(event.data);
        return;
      case 'ProviderAccountCreated': {
        const d = event.data;
        statement(
          db,
          'INSERT INTO vps_accounts (account_id, provider_id, region, config, token_secret_id, created_at, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?)',
        ).run(d.accountId, d.providerId, d.region, JSON.stringify(d.config), d.tokenSecretId, time, seq);
        return;
      }
      case 'HoldPlaced': {
        const d = event.data;
        statement(
          db,
          `INSERT INTO vps_holds (site_id, hold_id, tenant_id, pool_id, nodes, whole_nodes, selector, placed_at, expires_at, released_at, last_seq)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?) ON CONFLICT (site_id, hold_id) DO NOTHING`,
        ).run(
          d.siteId,
          d.holdId,
          'tenantId' in d.holder ? d.holder.tenantId : null,
          'poolId' in d.holder ? d.holder.poolId : null,
          JSON.stringify(d.nodes),
          d.wholeNodes ? 1 : 0,
          JSON.stringify(d.selector),
          d.placedAt,
          d.expiresAt,
          seq,
        );
        return;
      }
      case 'InstancePlaced': {
        const { siteId, nodeId, runtime, resources, freeBefore, fromHolds, considered, placedAt, warmSlot } = event.data;
        const placement = { siteId, nodeId, runtime, resources, freeBefore, fromHolds, considered, placedAt, ...(warmSlot ? { warmSlot } : {}) };
        if (warmSlot) statement(db, 'DELETE FROM vps_warm_slots WHERE slot_id = ?').run(warmSlot.slotId);
        updateInstance(event.data.tenantId, event.data.instanceId, 'placement = @placement', { placement: JSON.stringify(placement) });
        return;
      }
      case 'InstanceRelocated': {
        const { siteId, nodeId, runtime, resources, freeBefore, fromHolds, considered, relocatedAt, fromNodeId, reason } = event.data;
        const placement = {
          siteId,
          nodeId,
          runtime,
          resources,
          freeBefore,
          fromHolds,
          considered,
          placedAt: relocatedAt,
          relocatedFrom: { nodeId: fromNodeId, reason },
        };
        updateInstance(event.data.tenantId, event.data.instanceId, 'placement = @placement', { placement: JSON.stringify(placement) });
        return;
      }
      case 'InstanceUnplaced':
        updateInstance(event.data.tenantId, event.data.instanceId, 'placement = NULL', {});
        return;
      case 'HoldReleased':
        statement(db, 'UPDATE vps_holds SET released_at = ?, last_seq = ? WHERE site_id = ? AND hold_id = ?').run(
          event.data.releasedAt,
          seq,
          event.data.siteId,
          event.data.holdId,
        );
        return;
      default:
        return;
    }
  },
});
