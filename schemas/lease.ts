import { z } from 'zod';
import { CommandResponderView } from './commandPartitions.ts';

/** The services that must run as one active instance: each takes a leader lease (`bc_leases` KV, one key each). */
export const LeasedService = z.enum(['workflow-orchestrator', 'bmc-monitor', 'vps-reconciler', 'fleet-sensors', 'rollout-controller']);
export type LeasedService = z.infer<typeof LeasedService>;

/**
 * A lease as stored under its service's key. `term` is the KV revision of the write that took the lease (0 on that
 * very write, which cannot name its own revision: the term is then the entry's revision). Renewals keep the term and
 * change only the revision, so the term is the fencing token a leader stamps on its commands.
 */
export const LeaseRecord = z.object({
  service: LeasedService,
  /** The process holding it: `<host>:<pid>:<random>`. */
  holder: z.string().min(1).max(200),
  term: z.number().int().nonnegative(),
  /** How long the holder may go without renewing before a contender may take the lease. */
  leaseMs: z.number().int().positive(),
  acquiredAt: z.string(),
  renewedAt: z.string(),
});
export type LeaseRecord = z.infer<typeof LeaseRecord>;

/** Header a leased service stamps on its commands: `<service>/<term>`. */
export const LEASE_HEADER = 'Bc-Lease';

/** Who leads what, as `GET /v1/services` and `/readyz` report it. */
export const ServiceLeader = z.object({
  service: LeasedService,
  holder: z.string(),
  term: z.number().int().positive(),
  leaseMs: z.number().int().positive(),
  acquiredAt: z.string(),
  renewedAt: z.string(),
  /** Renewed longer ago than its lease (by the API's clock): the holder is likely gone and a standby may take over. */
  stale: z.boolean(),
});
export type ServiceLeader = z.infer<typeof ServiceLeader>;

export const ServicesView = z.object({ leaders: z.array(ServiceLeader), commandResponders: z.array(CommandResponderView) });
export type ServicesView = z.infer<typeof ServicesView>;

export const formatLeaseStamp = (service: LeasedService, term: number) => `${service}/${term}`;

/** Parses a `Bc-Lease` header; undefined when it is not one. */
export function parseLeaseStamp(value: string): { service: LeasedService; term: number } | undefined {
  const at = value.lastIndexOf('/');
  const service = LeasedService.safeParse(value.slice(0, at));
  const term = Number(value.slice(at + 1));
  if (at <= 0 || !service.success || !Number.isSafeInteger(term) || term <= 0) return undefined;
  return { service: service.data, term };
}
