import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import { BmcEndpoint } from '../agent/bmc.ts';
import { MacAddress } from './macAddress.ts';

export { SecretRef } from '../ids.ts';
export { MacAddress } from './macAddress.ts';

/** `metal.enroll`: register a machine at a site; it starts in `enrolled`. Omit `nodeId` to derive one from the command id. */
export const EnrollNode = z
  .object({
    nodeId: ResourceId.optional(),
    siteId: ResourceId,
    bmc: BmcEndpoint,
    hardwareProfile: z.string().min(1).max(100),
    macs: z.array(MacAddress).min(1).max(32),
    /** IPv4 addresses the machine's own API answers on (an agentless OS): the only hosts `site.httpProxy` may reach. */
    addresses: z.array(z.ipv4()).max(16).default([]),
    /**
     * The metal pool (`vps.createPool … class: 'metal'`) the node serves; it must be at this site. The pool's `agent`
     * decides whether the node ever runs `bcd` (none: agentless, out-of-band only).
     */
    poolId: ResourceId.optional(),
  })
  .strict();
export type EnrollNode = z.input<typeof EnrollNode>;

/**
 * `metal.setMaintenance`: an operator takes a node out of (or back into) service. Manual maintenance stays until an
 * operator clears it; a repeated request with the same flag and reason is a no-op.
 */
export const SetMaintenance = z
  .object({
    nodeId: ResourceId,
    on: z.boolean(),
    reason: z.string().max(500).optional(),
  })
  .strict();
export type SetMaintenance = z.infer<typeof SetMaintenance>;

/**
 * `metal.reportBmcHealth` (sent by the BMC monitor): whether the node's BMC answered a signed power read. A lost BMC
 * puts a node that is not in maintenance into maintenance (source `bmc`); the BMC answering again clears exactly
 * that, never a flag an operator or a failed release set.
 */
export const ReportBmcHealth = z
  .object({
    nodeId: ResourceId,
    reachable: z.boolean(),
    detail: z.string().max(500).optional(),
  })
  .strict();
export type ReportBmcHealth = z.infer<typeof ReportBmcHealth>;
