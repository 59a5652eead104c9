import type { WipeMethod } from '../agent/diskWipe.ts';
import { aggregateRef } from '../aggregateRef.ts';
import type { PoolAgent, PoolClass } from './poolCommands.ts';
import type { WarmSetting } from './warmPool.ts';

export type PoolState =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly poolId: string;
      readonly class: PoolClass;
      readonly agent: PoolAgent;
      readonly accountId: string | null;
      readonly siteId: string | null;
      /** The bcx runtime a metal pool's instances run on; absent: none are placed. */
      readonly runtime?: string;
      readonly policy: {
        readonly allowUnverifiedRelease: boolean;
        readonly provisioningCidrs: readonly string[];
        readonly wipeMethod?: WipeMethod;
        /** The hardware profile every node enrolled into the pool has (`metal.enroll` checks it). */
        readonly hardwareProfile?: string;
      };
      /** Tenants that may create instances here, in the order they were offered the pool. */
      readonly offeredTo: readonly string[];
      /** The warm slots a metal pool keeps (`vps.setWarmPool`); absent: none. */
      readonly warm?: WarmSetting;
    };

export const isOfferedTo = (pool: PoolState, tenantId: string): boolean => pool.exists && pool.offeredTo.includes(tenantId);

/** What another aggregate may read of a pool (`bc.evt.vps.pool.<poolId>`). */
export const poolRef = aggregateRef<PoolState>('vps', 'pool');
