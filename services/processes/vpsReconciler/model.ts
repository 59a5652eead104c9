import type { DesiredInstanceState, ObservedInstanceState } from '../../../schemas/vps/instanceCommands.ts';
import type { VpsEvent } from '../../../schemas/vps/events.ts';
import type { HostResources } from '../../../schemas/vps/placement.ts';
import { HostReports } from './hostReports.ts';
import { WarmSlots } from './warmModel.ts';

/** What the tenant asked to create, from its `InstanceRequested`. */
export interface InstanceSpec {
  readonly poolId: string;
  readonly flavorId: string;
  readonly image: string;
  readonly sshKeys: readonly string[];
  readonly userData: string | null;
  /** What it takes of a host (metal pools): its flavor's, from the reservation. */
  readonly resources: HostResources;
}

/** What this process sent a metal instance's host, and whether the host ever listed it (in memory: a restart sends again). */
export interface HostExchange {
  /** The last `instance.apply`: the desired state it carried, and when it went out (ms since the epoch). */
  applied?: { readonly desired: 'running' | 'stopped'; readonly at: number };
  /** When the last `instance.remove` went out. */
  removeSentAt?: number;
  /** A verified heartbeat of its node listed it since it was placed. */
  seen?: boolean;
  /** When this process first asked for its placement (a refusal is retried until `placementWaitMs` after it). */
  placeAskedAt?: number;
  /** Placed here by a relocation: until this node lists it, it runs nowhere we know of (recorded `provisioning`). */
  relocated?: boolean;
  /** A remediation ended: the host is asked to converge it again (`instance.apply`) whatever it last reported. */
  reapply?: boolean;
}

/**
 * One requested instance as the reconciler knows it. Keyed by tenant and id: a second tenant racing for an id has a
 * request of its own here, which the reconciler refuses (the instance's subject names the first).
 */
export interface ReconciledInstance {
  readonly key: string;
  readonly tenantId: string;
  readonly instanceId: string;
  readonly spec: InstanceSpec;
  desired: DesiredInstanceState;
  observed: ObservedInstanceState | null;
  providerInstanceId: string | null;
  addresses: readonly string[];
  message: string | null;
  /** The reservation was given back: the instance is gone or never existed; nothing is left to do. */
  released: boolean;
  /** The instance id belongs to another tenant: this request gets nothing but its quota back. */
  refused: boolean;
  /** A remediation runs on the instance, or a failed one left it needing attention: the reconciler leaves it be. */
  held?: boolean;
  /**
   * This process appended the `provisioning` record itself and has not probed the provider since: nothing is created
   * before that record, so no server can carry the instance's client token yet (see `probe`).
   */
  nothingCreatedYet?: boolean;
  /** When this process last asked the provider about it (ms since the epoch): the resync polls it once per period. */
  probedAt?: number;
  /**
   * The stream sequence as of which `observed`, `providerInstanceId`, `addresses` and `message` are what the log says.
   * The reconciler applies its own reports when they are answered; the log's copies of earlier ones may still be on
   * their way to the consumer, and must not take the instance back to a state it has left.
   */
  observedSeq?: number;
  /** A metal instance's node, from `InstancePlaced` on the site's book (null once unplaced; absent: not placed). */
  placement?: { readonly siteId: string; readonly nodeId: string } | null;
  /** Its node was found lost (`InstanceRelocationRequested`) and it is not placed again yet. */
  relocation?: { readonly fromNodeId: string } | null;
  /** Placed warm: the slot its host takes for it (`instance.apply` with `fromSlot`). */
  fromSlot?: string;
  host?: HostExchange;
}

export interface ProviderAccount {
  readonly providerId: string;
  readonly region: string;
  readonly config: Readonly<Record<string, string | number | boolean>>;
  readonly tokenSecretId: string;
}

export interface ProviderPool {
  readonly accountId: string | null;
  readonly class: 'provider' | 'metal';
  readonly siteId?: string | null;
  /** A metal pool's bcx runtime (absent: its instances are never placed). */
  readonly runtime?: string;
}

export const instanceKey = (tenantId: string, instanceId: string) => `${tenantId}/${instanceId}`;

/**
 * The VPS world folded from `bc.evt.vps.>` in log order: instances with what was asked and what was seen, pools with
 * their account, flavors' offers per pool, accounts. Every update is an assignment, so folding an event twice is
 * harmless.
 */
export class VpsModel {
  readonly instances = new Map<string, ReconciledInstance>();
  readonly pools = new Map<string, ProviderPool>();
  /** offer id by flavor id, then pool id. */
  readonly offers = new Map<string, Map<string, string>>();
  readonly accounts = new Map<string, ProviderAccount>();
  /** Instances whose provider stayed unavailable: failures so far and when to try again (ms since the epoch). */
  readonly retries = new Map<string, { failures: number; at: number }>();
  /** The latest verified instance reports of each host. */
  readonly hosts = new HostReports();
  /** Keys of the instances placed on each node. */
  readonly placedOn = new Map<string, Set<string>>();
  /**
   * Instances moved off each node (`InstanceRelocated`) whose copy there its host has not shown gone, by key, with when
   * this process last asked that host to remove it. A host that comes back listing one is asked to remove it: the
   * instance never serves from two nodes by our choice.
   */
  readonly copiesLeft = new Map<string, Map<string, { removeSentAt?: number }>>();
  /** The warm pools: settings, slots, removals (`warmModel.ts`). */
  readonly warm = new WarmSlots();

  /** Applies one event, carried by the message at stream sequence `seq`; returns the key of the instance it concerns, if any. */
  apply(event: VpsEvent, seq: number): string | undefined {
    switch (event.type) {
      case 'InstanceRequested': {
        const { tenantId, instanceId, poolId, flavorId, image, sshKeys, userData } = event.data;
        const { vcpus, memoryMib, diskGib } = event.data.resources;
        const key = instanceKey(tenantId, instanceId);
        if (!this.instances.has(key)) {
          this.instances.set(key, {
            key,
            tenantId,
            instanceId,
            spec: { poolId, flavorId, image, sshKeys, userData, resources: { vcpus, memoryMib, diskGib } },
            desired: 'running',
            observed: null,
            providerInstanceId: null,
            addresses: [],
            message: null,
            released: false,
            refused: false,
          });
        }
        return key;
      }
      case 'QuotaReleased':
        return this.#update(event.data, { released: true });
      case 'InstanceDesiredStateSet':
        return this.#update(event.data, { desired: event.data.desired, held: false });
      case 'InstanceRemediationRequested':
      case 'InstanceRemediationFailed':
        return this.#update(event.data, { held: true });
      case 'InstanceRemediationCompleted': {
        const key = this.#update(event.data, { desired: event.data.returnTo, held: false });
        // A metal instance goes back to its host: applied again there, its state taken from what the host says after.
        const instance = key === undefined ? undefined : this.instances.get(key);
        if (instance?.placement) instance.host = { ...instance.host, reapply: true };
        return key;
      }
      case 'InstanceObserved': {
        const { observed, providerInstanceId, addresses, message } = event.data;
        const known = this.instances.get(instanceKey(event.data.tenantId, event.data.instanceId))?.observedSeq ?? 0;
        if (seq <= known) return undefined;
        return this.#update(event.data, { observed, providerInstanceId, addresses, message, observedSeq: seq });
      }
      case 'PoolCreated': {
        const { accountId, siteId, runtime } = event.data;
        this.pools.set(event.data.poolId, { accountId, class: event.data.class, siteId, ...(runtime !== undefined ? { runtime } : {}) });
        return undefined;
      }
      case 'InstancePlaced': {
        const { siteId, nodeId, warmSlot } = event.data;
        this.warm.apply(event);
        const key = this.#update(event.data, { placement: { siteId, nodeId }, ...(warmSlot ? { fromSlot: warmSlot.slotId } : {}) });
        if (key) this.placedOn.set(nodeId, (this.placedOn.get(nodeId) ?? new Set()).add(key));
        return key;
      }
      case 'InstanceRelocationRequested':
        return this.#update(event.data, { relocation: { fromNodeId: event.data.fromNodeId } });
      case 'InstanceRelocated': {
        const { siteId, nodeId, fromNodeId } = event.data;
        // Moved: the slot it took stays on the node it left; the new node creates it cold.
        const key = this.#update(event.data, { placement: { siteId, nodeId }, relocation: null, host: { relocated: true }, fromSlot: undefined });
        if (!key) return undefined;
        this.placedOn.get(fromNodeId)?.delete(key);
        this.placedOn.set(nodeId, (this.placedOn.get(nodeId) ?? new Set()).add(key));
        this.copiesLeft.set(fromNodeId, (this.copiesLeft.get(fromNodeId) ?? new Map<string, { removeSentAt?: number }>()).set(key, {}));
        return key;
      }
      case 'InstanceUnplaced': {
        const key = this.#update(event.data, { placement: null });
        if (key) this.placedOn.get(event.data.nodeId)?.delete(key);
        return key;
      }
      case 'FlavorMapped': {
        const byPool = this.offers.get(event.data.flavorId) ?? new Map<string, string>();
        byPool.set(event.data.poolId, event.data.offerId);
        this.offers.set(event.data.flavorId, byPool);
        return undefined;
      }
      case 'ProviderAccountCreated': {
        const { accountId, providerId, region, config, tokenSecretId } = event.data;
        this.accounts.set(accountId, { providerId, region, config, tokenSecretId });
        return undefined;
      }
      default:
        this.warm.apply(event);
        return undefined;
    }
  }

  /** Patches a known instance (an event for one never requested is ignored); returns its key. */
  #update(ids: { tenantId: string; instanceId: string }, patch: Partial<ReconciledInstance>): string | undefined {
    const instance = this.instances.get(instanceKey(ids.tenantId, ids.instanceId));
    if (instance) Object.assign(instance, patch);
    return instance?.key;
  }

  /** The account an instance's pool draws on; undefined for metal pools (not this reconciler's) or unknown pools. */
  accountOf(instance: ReconciledInstance): { accountId: string; account: ProviderAccount } | undefined {
    const pool = this.pools.get(instance.spec.poolId);
    if (!pool || pool.class !== 'provider' || !pool.accountId) return undefined;
    const account = this.accounts.get(pool.accountId);
    return account && { accountId: pool.accountId, account };
  }

  /** The metal pool an instance runs in, with its runtime; undefined for provider pools and unknown pools. */
  metalPoolOf(instance: ReconciledInstance): { siteId: string; runtime: string | undefined } | undefined {
    const pool = this.pools.get(instance.spec.poolId);
    if (!pool || pool.class !== 'metal' || !pool.siteId) return undefined;
    return { siteId: pool.siteId, runtime: pool.runtime };
  }

  offerOf(instance: ReconciledInstance): string | undefined {
    return this.offers.get(instance.spec.flavorId)?.get(instance.spec.poolId);
  }
}

/** Nothing to do until the tenant asks for something else: no polling for these. */
export function isAtRest(instance: ReconciledInstance): boolean {
  if (instance.released || instance.refused || instance.held === true) return true;
  // Its node is lost: it is asked about again until it is placed elsewhere.
  if (instance.relocation) return false;
  // An error is the provider's or the operator's to fix; polling would only repeat it. A new desired state re-runs it.
  if (instance.observed === 'error') return true;
  return instance.observed === instance.desired;
}
