import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { ResourceId } from '../ids.ts';

/**
 * One ramdisk boot of one workflow attempt: the power step (`stepIndex`, `attempt`) whose reset the BMC accepted, right
 * before `wait.agentJoined`. `ticketId` is the site's per-boot ticket (the secret part of the boot script's URL): the
 * site mints it when the BMC accepts the reset and spends it on the first fetch of the script.
 */
export const RamdiskBoot = z
  .object({
    workflowId: z.string().min(1).max(120),
    stepIndex: z.number().int().nonnegative(),
    attempt: z.number().int().positive(),
    ticketId: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  })
  .strict();
export type RamdiskBoot = z.infer<typeof RamdiskBoot>;

/** The aggregate id of a boot (`bc.evt.trust.ramdiskBoot.<bootId>`): subject-safe, one per power step attempt. */
export const bootIdOf = (boot: Pick<RamdiskBoot, 'workflowId' | 'stepIndex' | 'attempt'>): string => `${boot.workflowId}-s${boot.stepIndex}-a${boot.attempt}`;

/**
 * The boots `boot` superseded, newest first: the earlier attempts of the same power step (a retried step, or a restart
 * from the boot after `BOOT_LOST`). Each reset the machine again, so none of their ramdisks can be the one now running.
 */
export const supersededBootIdsOf = (boot: Pick<RamdiskBoot, 'workflowId' | 'stepIndex' | 'attempt'>): string[] =>
  Array.from({ length: boot.attempt - 1 }, (_, i) => bootIdOf({ ...boot, attempt: boot.attempt - 1 - i }));

/**
 * Why a boot is contested: its script was fetched a second time (`SECOND_FETCH`), a second ticket was presented for it
 * (`SECOND_TICKET`), or a ramdisk registered for the node with another token while this boot's was awaited
 * (`SECOND_REGISTRATION`). Any of them means something other than the machine that was reset is in the boot.
 */
export const BootContestReason = z.enum(['SECOND_FETCH', 'SECOND_TICKET', 'SECOND_REGISTRATION']);
export type BootContestReason = z.infer<typeof BootContestReason>;

const boot = { bootId: z.string(), workflowId: z.string(), siteId: z.string(), nodeId: z.string() };

/**
 * The control plane minted this boot's single ramdisk join token (`tokenId`) for the site's ticket `ticketId`: the
 * one registration `wait.agentJoined` accepts. Recorded again only for the same ticket (a reply lost on the way).
 */
export const RamdiskBootTokenIssued = defineEvent(
  'RamdiskBootTokenIssued',
  z.object({
    ...boot,
    stepIndex: z.number().int().nonnegative(),
    attempt: z.number().int().positive(),
    ticketId: z.string(),
    tokenId: z.string(),
    issuedAt: z.string(),
  }),
);

/** Alarm: the boot was contested; the workflow fails closed and the node goes to maintenance (`BOOT_CONTESTED`). */
export const RamdiskBootContested = defineEvent('RamdiskBootContested', z.object({ ...boot, reason: BootContestReason, detail: z.string().max(500) }));

export const ramdiskBootEvents = [RamdiskBootTokenIssued, RamdiskBootContested] as const;
export type RamdiskBootEvent = EventOf<(typeof ramdiskBootEvents)[number]>;

/** `pki.recordBootToken` (the boot token service): the token minted for a boot's ticket. */
export const RecordBootToken = z
  .object({ bootId: z.string(), boot: RamdiskBoot, siteId: ResourceId, nodeId: ResourceId, tokenId: z.string().min(1).max(64) })
  .strict();
export type RecordBootToken = z.infer<typeof RecordBootToken>;

/** `pki.contestBoot` (the boot token service, the workflow executor): records the alarm once. */
export const ContestBoot = z
  .object({ bootId: z.string(), workflowId: z.string(), siteId: ResourceId, nodeId: ResourceId, reason: BootContestReason, detail: z.string().max(500) })
  .strict();
export type ContestBoot = z.infer<typeof ContestBoot>;

/** How long a boot has from the accepted reset to its script fetch, by default (`BC_RAMDISK_BOOT_BUDGET_MS`). */
export const DEFAULT_RAMDISK_BOOT_BUDGET_MS = 300_000;
