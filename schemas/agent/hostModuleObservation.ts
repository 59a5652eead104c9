import { z } from 'zod';
import { HostModuleReport } from './hostModules.ts';
import { ResourceId } from '../ids.ts';
import { ModuleName } from '../fleet/moduleManifest.ts';

/**
 * One module of one host's verified heartbeat, as the rollout controller observes it: what `bcd node` reported
 * (version, manifest digest, state, probes) and `at`, when the control plane received it (its own clock, not the
 * host's: the controller compares it with wave starts it stamped itself).
 */
export const HostModuleObservation = HostModuleReport.omit({ name: true })
  .extend({ host: ResourceId, module: ModuleName, at: z.number().int().nonnegative() })
  .strict();
export type HostModuleObservation = z.infer<typeof HostModuleObservation>;
