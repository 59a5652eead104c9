import { z } from 'zod';
import { ResourceId } from '../ids.ts';

/** What a tenant wants an instance to be; `running` from creation until someone says otherwise. */
export const DesiredInstanceState = z.enum(['running', 'stopped', 'deleted']);
export type DesiredInstanceState = z.infer<typeof DesiredInstanceState>;

/** What the reconciler last saw the instance be (the provider-neutral states of `schemas/vps/provider.ts`). */
export const ObservedInstanceState = z.enum(['provisioning', 'running', 'stopped', 'deleting', 'deleted', 'error']);
export type ObservedInstanceState = z.infer<typeof ObservedInstanceState>;

/** Engine (reconciler): what the instance looks like at the provider now. */
export const RecordInstanceObserved = z
  .object({
    instanceId: ResourceId,
    tenantId: ResourceId,
    observed: ObservedInstanceState,
    providerInstanceId: z.string().min(1).max(200).optional(),
    addresses: z.array(z.string().max(64)).max(32).optional(),
    message: z.string().max(2_000).optional(),
  })
  .strict();
export type RecordInstanceObserved = z.infer<typeof RecordInstanceObserved>;
