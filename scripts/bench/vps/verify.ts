import { ReadModelFiles } from '../../../services/projectors/readModelFiles.ts';
import { ReadModelReader } from '../../../projections/runtime/readModelReader.ts';
import { quotaOf } from '../../../projections/vps/queries.ts';
import { resourceDimensions, type Resources } from '../../../schemas/vps/tenantCommands.ts';
import { AggregateRepository } from '../../../services/platform/commands/aggregateRepository.ts';
import type { EventStore } from '../../../services/platform/eventStore/eventStore.ts';
import { tenantAggregate, usageOf } from '../../../services/vps/tenant/tenant.ts';
import type { AcmeServerRecord } from '../../../test/walkthroughs/acme-cloud/cloud.ts';
import { tenantIdOf } from './driver.ts';

export interface QuotaCheck {
  /** Tenants whose used + reserved exceeds a limit, per source. */
  overReadModel: string[];
  overAggregates: string[];
  /** Instances held (used + reserved) in all, per source: both must equal the accepted commands. */
  heldReadModel: number;
  heldAggregates: number;
}

const over = (limit: Resources, used: Resources, reserved: Resources) => resourceDimensions.some((d) => used[d] + reserved[d] > limit[d]);

/** Reads every tenant's quota back from the `vps` read model (once it applied the whole log) and from its aggregate. */
export async function checkQuotas(store: EventStore, dataDir: string, tenants: number): Promise<QuotaCheck> {
  const reader = new ReadModelReader(new ReadModelFiles(dataDir, 'vps'));
  const repository = new AggregateRepository(store);
  const check: QuotaCheck = { overReadModel: [], overAggregates: [], heldReadModel: 0, heldAggregates: 0 };
  try {
    await reader.waitFor(await store.streamLastSequence(), 60_000);
    for (let i = 0; i < tenants; i++) {
      const tenantId = tenantIdOf(i);
      const view = quotaOf(reader.db(), tenantId);
      if (!view || over(view.limit, view.used, view.reserved)) check.overReadModel.push(tenantId);
      check.heldReadModel += (view?.used.instances ?? 0) + (view?.reserved.instances ?? 0);
      const state = (await repository.load(tenantAggregate, tenantId)).state;
      const { used, reserved } = usageOf(state);
      if (!state.exists || over(state.quota, used, reserved)) check.overAggregates.push(tenantId);
      check.heldAggregates += used.instances + reserved.instances;
    }
  } finally {
    reader.close();
  }
  return check;
}

/** Client tokens the emulator created more than one server for: must be none. */
export function duplicateServers(records: readonly AcmeServerRecord[]): number {
  const perToken = new Map<string, number>();
  for (const r of records) perToken.set(r.clientToken, (perToken.get(r.clientToken) ?? 0) + 1);
  return [...perToken.values()].filter((n) => n > 1).length;
}
