import { sign, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { BcxDriverAdvert } from '../bcx/bcxProtocol.ts';
import { ResourceId } from '../ids.ts';
import { HostInstanceReport, MAX_HOST_INSTANCES } from './hostInstances.ts';
import { HostModuleReport, MAX_HOST_MODULES } from './hostModules.ts';
import { keyIdOf } from '../trust/agentIds.ts';
import { AgentId } from '../trust/agentIds.ts';
import { AgentCommandId } from './agentCommand.ts';
import { signatureHolds } from './agentResultCodec.ts';

/** The last error an agent met that stopped it or its registration: its stable code, a short message and when. */
export const AgentLastError = z.object({ code: z.string().max(64), message: z.string().max(200), at: z.iso.datetime() }).strict();
export type AgentLastError = z.infer<typeof AgentLastError>;

/**
 * What an agent inside a machine (a ramdisk, `bcd node`) publishes on `bc.site.<siteId>.hb.<nodeId>` (core NATS, not
 * stored): "alive" every few seconds for as long as it runs (no `commandId`), and "still working on `commandId`"
 * while a command runs. The executor waiting for a result counts the agent lost when none naming its command verifies
 * for `BC_AGENT_HEARTBEAT_TIMEOUT_MS`; a node is `connected` while one verified within `BC_AGENT_PRESENCE_WINDOW_MS`.
 * `startedAt` (when this agent process started) and `lastError` (what stopped the previous one, or its registration)
 * make a crash-looping agent visible.
 */
export const AgentHeartbeat = z
  .object({
    agentId: AgentId,
    siteId: ResourceId,
    nodeId: ResourceId,
    commandId: AgentCommandId.optional(),
    sentAt: z.iso.datetime(),
    startedAt: z.iso.datetime().optional(),
    lastError: AgentLastError.optional(),
    /** The bcx plugins `bcd node` runs and that said hello (walkthrough 4's `Hello.drivers`); absent: none. */
    drivers: z.array(BcxDriverAdvert).max(64).optional(),
    /** The modules installed on the host (`bcd node`, docs/modules.md "On the host"); absent: none. */
    modules: z.array(HostModuleReport).max(MAX_HOST_MODULES).optional(),
    /** The instances the host runs through its runtime plugins (`bcd node`, docs/bcx.md); absent: none. */
    instances: z.array(HostInstanceReport).max(MAX_HOST_INSTANCES).optional(),
  })
  .strict();
export type AgentHeartbeat = z.infer<typeof AgentHeartbeat>;

/** The heartbeat's JSON bytes (base64) signed with the agent's registered Ed25519 key. */
export const SignedAgentHeartbeat = z.object({ heartbeat: z.base64(), signature: z.base64(), keyId: z.string() }).strict();
export type SignedAgentHeartbeat = z.infer<typeof SignedAgentHeartbeat>;

export function signAgentHeartbeat(heartbeat: AgentHeartbeat, signer: { privateKey: KeyObject; publicKeyRaw: Uint8Array }): SignedAgentHeartbeat {
  const bytes = Buffer.from(JSON.stringify(heartbeat), 'utf8');
  return {
    heartbeat: bytes.toString('base64'),
    signature: sign(null, bytes, signer.privateKey).toString('base64'),
    keyId: keyIdOf(Buffer.from(signer.publicKeyRaw).toString('base64')),
  };
}

/** The heartbeat a message carries, unverified; undefined for anything that is not one. */
export function openAgentHeartbeat(data: unknown): { signed: SignedAgentHeartbeat; heartbeat: AgentHeartbeat } | undefined {
  const signed = SignedAgentHeartbeat.safeParse(data);
  if (!signed.success) return undefined;
  try {
    const heartbeat = AgentHeartbeat.safeParse(JSON.parse(Buffer.from(signed.data.heartbeat, 'base64').toString('utf8')));
    return heartbeat.success ? { signed: signed.data, heartbeat: heartbeat.data } : undefined;
  } catch {
    return undefined;
  }
}

/** True when `signed` is signed by the Ed25519 key (base64 raw) registered for the agent it names. */
export function heartbeatSignedBy(signed: SignedAgentHeartbeat, publicKeyBase64: string): boolean {
  return (
    signed.keyId === keyIdOf(publicKeyBase64) &&
    signatureHolds(Buffer.from(signed.heartbeat, 'base64'), Buffer.from(signed.signature, 'base64'), publicKeyBase64)
  );
}
