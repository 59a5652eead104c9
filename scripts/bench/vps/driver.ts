import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { sendCommand } from '../../../services/platform/commands/sendCommand.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import { FLAVOR, FLAVOR_ID, POOL_ID } from './stack.ts';

const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchTenantKey000000000000 bench@vps';

export const tenantIdOf = (i: number) => `bench-t${String(i).padStart(3, '0')}`;

/** The limits every bench tenant gets: `perTenant × share` instances of the one flavor. */
export function benchQuota(perTenant: number, share: number) {
  const instances = Math.floor(perTenant * share);
  return { instances, vcpus: instances * FLAVOR.vcpus, memoryMib: instances * FLAVOR.memoryMib, diskGib: instances * FLAVOR.diskGib };
}

export async function createTenants(nc: NatsConnection, tenants: number, quota: ReturnType<typeof benchQuota>): Promise<void> {
  for (let i = 0; i < tenants; i++) {
    const tenantId = tenantIdOf(i);
    await sendCommand(nc, 'vps.createTenant', { tenantId, name: `Bench tenant ${i}` });
    await sendCommand(nc, 'vps.setQuota', { tenantId, ...quota });
    await sendCommand(nc, 'vps.offerPool', { poolId: POOL_ID, tenantId });
  }
}

export interface LoadResult {
  accepted: number;
  quotaExceeded: number;
  /** CONCURRENCY_CONFLICT answers (another process reserved on the tenant first), each retried by the client. */
  conflictsRetried: number;
  otherErrors: string[];
  seconds: number;
  /** Instance ids accepted, by tenant. */
  acceptedIds: Map<string, string[]>;
  firstAcceptedAt: number;
}

/**
 * Sends `commands` `vps.createInstance` requests over NATS, tenants interleaved (command k goes to tenant k mod T),
 * `concurrency` in flight. A conflict is retried with the same command id until it is decided.
 */
export async function createInstances(nc: NatsConnection, commands: number, tenants: number, concurrency: number): Promise<LoadResult> {
  const result: LoadResult = { accepted: 0, quotaExceeded: 0, conflictsRetried: 0, otherErrors: [], seconds: 0, acceptedIds: new Map(), firstAcceptedAt: 0 };
  let next = 0;
  const started = performance.now();
  const client = async () => {
    for (let k = next++; k < commands; k = next++) {
      const tenantId = tenantIdOf(k % tenants);
      const instanceId = `vm-${String(k).padStart(6, '0')}`;
      const payload = {
        tenantId,
        instanceId,
        poolId: POOL_ID,
        flavorId: FLAVOR_ID,
        image: 'debian-12',
        sshKeys: [SSH_KEY],
        userData: `#cloud-config\nhostname: ${instanceId}\n`,
      };
      for (;;) {
        try {
          await sendCommand(nc, 'vps.createInstance', payload, { commandId: `bench-${instanceId}`, timeoutMs: 30_000 });
          result.accepted++;
          result.firstAcceptedAt ||= Date.now();
          result.acceptedIds.set(tenantId, [...(result.acceptedIds.get(tenantId) ?? []), instanceId]);
          break;
        } catch (err) {
          const code = err instanceof PlatformError ? err.code : 'INTERNAL';
          if (code === 'CONCURRENCY_CONFLICT') {
            result.conflictsRetried++;
            continue;
          }
          if (code === 'QUOTA_EXCEEDED') result.quotaExceeded++;
          else if (result.otherErrors.length < 20) result.otherErrors.push(`${instanceId}: ${code} ${(err as Error).message}`);
          break;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/** Counts instances the reconciler recorded `running` for the first time, from the live event subjects. */
export class RunningWatch {
  readonly runningAt = new Map<string, number>();
  #lastProgress = Date.now();
  readonly #sub: Subscription;

  constructor(nc: NatsConnection) {
    this.#sub = nc.subscribe('bc.evt.vps.instance.>', {
      callback: (_err, msg) => {
        const batch = msg.json<{ events: { type: string; data: { instanceId: string; observed?: string } }[] }>();
        for (const e of batch.events) {
          if (e.type !== 'InstanceObserved' || e.data.observed !== 'running' || this.runningAt.has(e.data.instanceId)) continue;
          this.runningAt.set(e.data.instanceId, Date.now());
          this.#lastProgress = Date.now();
        }
      },
    });
  }

  /** Resolves true once `count` instances ran, false when none came for `stallMs`. */
  async until(count: number, stallMs: number): Promise<boolean> {
    while (this.runningAt.size < count) {
      if (Date.now() - this.#lastProgress > stallMs) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return true;
  }

  stop(): void {
    this.#sub.unsubscribe();
  }
}
