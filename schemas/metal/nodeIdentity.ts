import { createHash } from 'node:crypto';
import { z } from 'zod';
import { aggregateRef } from '../aggregateRef.ts';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { ResourceId } from '../ids.ts';

/**
 * What makes a machine the machine it is, as the control plane can tell before and after inspection: the system its
 * BMC manages, and the SMBIOS system UUID the BMC reports. Each is held by one enrolled node at a time (its
 * `metal.nodeIdentity` aggregate, keyed by `identityKey`); a second node that names the same one is refused with
 * `NODE_IDENTITY_CONFLICT`. A retired node's identity is free again.
 */
export type NodeIdentity = { readonly kind: 'bmcSystem'; readonly address: string } | { readonly kind: 'systemUuid'; readonly uuid: string };

/** The root and `/redfish/v1` name the BMC's own system; `/redfish/v1/Systems/<id>` names one of several. */
function bmcSystemOf(address: string): string {
  const url = new URL(address);
  const system = /^\/redfish\/v1\/Systems\/([^/]+)\/?$/i.exec(url.pathname)?.[1];
  return `${url.origin}/redfish/v1/Systems/${system === undefined ? '*' : decodeURIComponent(system)}`;
}

/**
 * The aggregate id an identity is claimed under: the BMC's origin and system (lower-case host; the root and
 * `/redfish/v1` as `*`, the BMC's only system), or the UUID in lower case.
 */
export function identityKey(identity: NodeIdentity): string {
  const value = identity.kind === 'bmcSystem' ? bmcSystemOf(identity.address) : identity.uuid.toLowerCase();
  return `${identity.kind === 'bmcSystem' ? 'bmc' : 'uuid'}-${createHash('sha256').update(value).digest('hex').slice(0, 40)}`;
}

const SMBIOS_UUID = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;

/**
 * Whether a UUID the BMC reported names one machine: SMBIOS says all zeros is "present but not set" and all `F`s "not
 * present"; neither is claimed.
 */
export const isMachineUuid = (uuid: string): boolean => SMBIOS_UUID.test(uuid) && !/^[0-]+$/.test(uuid) && !/^[f-]+$/i.test(uuid);

/** The identity a machine's BMC address names, in the form shown in refusals (origin and system). */
export const describeIdentity = (identity: NodeIdentity): string =>
  identity.kind === 'bmcSystem'
    ? `BMC system ${bmcSystemOf(identity.address).replace('/Systems/*', ' (its only system)')}`
    : `system UUID ${identity.uuid.toLowerCase()}`;

export const NodeIdentityClaimed = defineEvent('NodeIdentityClaimed', z.object({ key: z.string(), nodeId: z.string(), identity: z.string() }));
export const nodeIdentityEvents = [NodeIdentityClaimed] as const;
export type NodeIdentityEvent = EventOf<(typeof nodeIdentityEvents)[number]>;

export type NodeIdentityState = { readonly claimedBy: string | null };
export const nodeIdentityRef = aggregateRef<NodeIdentityState>('metal', 'nodeIdentity');

/** `metal.claimIdentity` (engine): the orchestrator claims a node's BMC system at enrolment and its UUID at inspection. */
export const ClaimNodeIdentity = z
  .object({
    nodeId: ResourceId,
    identity: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('bmcSystem'), address: z.string().url() }).strict(),
      z.object({ kind: z.literal('systemUuid'), uuid: z.string().regex(SMBIOS_UUID) }).strict(),
    ]),
  })
  .strict();
export type ClaimNodeIdentity = z.infer<typeof ClaimNodeIdentity>;
