import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { HttpProxyRequest } from './httpProxy.ts';

/**
 * What an agent can be asked to do. `site` kinds run on the site agent against the node's BMC; `node` kinds run on
 * the ramdisk (or node) agent inside the machine.
 */
export const AgentCommandKinds = {
  'power.set': { runsOn: 'site', destructive: true },
  'power.get': { runsOn: 'site', destructive: false },
  'boot.setOnce': { runsOn: 'site', destructive: false },
  'media.insert': { runsOn: 'site', destructive: false },
  'media.eject': { runsOn: 'site', destructive: false },
  'inventory.read': { runsOn: 'site', destructive: false },
  // Destructive: the machine's API may act on a POST (reboot, reset), so it is never sent twice.
  'site.httpProxy': { runsOn: 'site', destructive: true },
  'firmware.update': { runsOn: 'site', destructive: true },
  'disk.wipe': { runsOn: 'node', destructive: true },
  'image.write': { runsOn: 'node', destructive: true },
  'userdata.write': { runsOn: 'node', destructive: false },
  'inventory.report': { runsOn: 'node', destructive: false },
} as const;
export type AgentCommandKind = keyof typeof AgentCommandKinds;
export const agentCommandKinds = Object.keys(AgentCommandKinds) as [AgentCommandKind, ...AgentCommandKind[]];

/**
 * Kinds only the ramdisk of the node's current boot may answer: what they report (a wiped or imaged disk) is the
 * platform's evidence about the machine, and an installed host's node agent belongs to the tenant.
 */
export const ramdiskOnlyKinds: ReadonlySet<AgentCommandKind> = new Set(['disk.wipe', 'image.write']);

/** A command's nonce: base64url, at least 128 bits. */
export const CommandNonce = z.string().regex(/^[A-Za-z0-9_-]{22,64}$/, 'must be a base64url nonce of at least 128 bits');

/** A fresh nonce: 128 random bits. */
export const newNonce = (): string => randomBytes(16).toString('base64url');

/**
 * The nonce of one command of a step attempt, derived from the attempt's nonce (recorded when the attempt started)
 * so a resumed attempt sends the same commands, yet nobody can compute it before the attempt began.
 */
export const commandNonce = (attemptNonce: string, commandId: string): string =>
  createHash('sha256').update(`bc-command-nonce/v1/${attemptNonce}/${commandId}`).digest('base64url').slice(0, 32);

/** Subject-safe id of one step attempt's command: `<workflowId>-s<stepIndex>-a<attempt>`. */
export const AgentCommandId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,120}$/);

export const PowerAction = z.enum(['on', 'off', 'cycle', 'softOff']);
export const BootTarget = z.enum(['Pxe', 'Cd', 'UefiHttp']);

/** Parameters per kind. Secrets never travel here: only references (`secret:<id>`). */
export const AgentCommandParams = {
  'power.set': z.object({ action: PowerAction }),
  'power.get': z.object({}),
  'boot.setOnce': z.object({ target: BootTarget }),
  'media.insert': z.object({ imageUrl: z.string().url() }),
  'media.eject': z.object({}),
  'inventory.read': z.object({}),
  'site.httpProxy': HttpProxyRequest,
  'firmware.update': z.object({ imageUrl: z.string().url() }),
  'disk.wipe': z.object({ mode: z.enum(['zero', 'discard']).default('zero') }),
  'image.write': z.object({ imageUrl: z.string().url(), sha256: z.string().regex(/^[0-9a-f]{64}$/), disk: z.string().optional() }),
  'userdata.write': z.object({ userData: z.string().max(65_536).optional(), sshKeys: z.array(z.string()).max(64).default([]) }),
  'inventory.report': z.object({}),
} satisfies Record<AgentCommandKind, z.ZodType>;

/**
 * A command for an agent, published (JSON) on the agent's command subject with `Nats-Msg-Id` = `commandId`. A
 * destructive command reaches an agent at most once per step attempt: JetStream dedupes re-publishes of the same
 * id, and the agent's journal refuses to execute an id twice.
 */
export const AgentCommand = z.object({
  commandId: AgentCommandId,
  kind: z.enum(agentCommandKinds),
  siteId: z.string(),
  nodeId: z.string(),
  workflowId: z.string(),
  stepIndex: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  destructive: z.boolean(),
  params: z.record(z.string(), z.unknown()),
  /** BMC endpoint and credentials reference, for site commands. */
  bmc: z.object({ address: z.string(), credentialsRef: z.string() }).optional(),
  issuedAt: z.string(),
  /** ISO time after which the agent must not start executing it. */
  notAfter: z.string(),
  /**
   * Fresh and unguessable per command: the signed result must carry it and is published under it
   * (`Subjects.agentResult`), so no result can exist before its command does.
   */
  nonce: CommandNonce,
  /** When set, the one agent whose result counts (ramdisk-only kinds: the ramdisk the workflow booted); others skip it. */
  agentId: z.string().optional(),
});
export type AgentCommand = z.infer<typeof AgentCommand>;
