import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { JoinAttestorName, JoinExpectation, JoinRefusal, JoinRole } from './joinTokens.ts';
import { CountRefusals } from './refusals.ts';
import { ramdiskBootEvents } from './ramdiskBoot.ts';

const AgentKey = z.object({
  agentId: z.string(),
  role: z.enum(['site', 'ramdisk', 'node']),
  siteId: z.string(),
  nodeId: z.string().nullable(),
  /** base64 of the raw 32-byte Ed25519 public key. */
  publicKey: z.string(),
  /** base64url SHA-256 of the raw public key: what a SignedAgentResult names as `key_id`. */
  keyId: z.string(),
  /** The join token that authorised this key (absent: the agent's own request, or an event older than the field). */
  joinTokenId: z.string().optional(),
});

export const AgentRegistered = defineEvent('AgentRegistered', AgentKey);
export const AgentKeyRotated = defineEvent('AgentKeyRotated', AgentKey.extend({ previousKeyId: z.string() }));

/** Why a registration was refused: each is an error code (`schemas/errorCodes.ts`) the sender receives. */
export const AgentRegistrationRefusal = z.enum(['AGENT_IDENTITY_MISMATCH', 'AGENT_KEY_UNPROVEN']);
export type AgentRegistrationRefusal = z.infer<typeof AgentRegistrationRefusal>;

/**
 * Audit: a registration was refused (on the subject of the agent it named). `metadata.actor` says who asked: the
 * NATS identity the broker bound the request to, or the join token.
 */
export const AgentRegistrationRefused = defineEvent(
  'AgentRegistrationRefused',
  AgentKey.omit({ joinTokenId: true }).extend({ reason: AgentRegistrationRefusal }),
);

/** The control plane asked the agent to replace key `keyId` (the key-age lane, or an operator); settled by `AgentKeyRotated`. */
export const AgentKeyRotationRequested = defineEvent(
  'AgentKeyRotationRequested',
  z.object({ agentId: z.string(), keyId: z.string(), reason: z.string().max(400) }),
);

export const agentEvents = [AgentRegistered, AgentKeyRotated, AgentRegistrationRefused, AgentKeyRotationRequested] as const;
export type AgentEvent = EventOf<(typeof agentEvents)[number]>;

/** A join token was made (`bc.evt.trust.joinToken.<tokenId>`). Only the hash of its secret is kept. */
export const JoinTokenCreated = defineEvent(
  'JoinTokenCreated',
  z.object({
    tokenId: z.string(),
    /** Hex SHA-256 of the secret. */
    hash: z.string(),
    role: JoinRole,
    siteId: z.string(),
    nodeId: z.string().nullable(),
    expiresAt: z.string(),
    expect: JoinExpectation.nullable(),
    /** Absent on tokens made before attestors were named: those were `issued`. */
    attestor: JoinAttestorName.optional(),
  }),
);

/**
 * The token was spent by the agent that joined with it; it is refused from now on. `keyId` (absent on events older
 * than the field) is the key it was spent for: the one key this token can authorise for that agent.
 */
export const JoinTokenUsed = defineEvent('JoinTokenUsed', z.object({ tokenId: z.string(), agentId: z.string(), keyId: z.string().optional() }));

/** Audit: a join was refused. Carries the code the joiner was answered with, never what it presented. */
export const JoinRefused = defineEvent(
  'JoinRefused',
  z.object({
    tokenId: z.string().nullable(),
    reason: JoinRefusal,
    role: JoinRole,
    siteId: z.string(),
    nodeId: z.string().nullable(),
    agentId: z.string(),
  }),
);

export const joinTokenEvents = [JoinTokenCreated, JoinTokenUsed, JoinRefused] as const;
export type JoinTokenEvent = EventOf<(typeof joinTokenEvents)[number]>;

/**
 * Refusals counted rather than recorded one by one (`bc.evt.trust.refusals.<kind>`): what the join and registration
 * services refused beyond the first refusal of each source in a window. An attack shows as one count per window,
 * with its busiest sources, and does not grow the log with its attempts.
 */
export const RefusalsCounted = defineEvent('RefusalsCounted', CountRefusals);

export const refusalEvents = [RefusalsCounted] as const;
export type RefusalEvent = EventOf<(typeof refusalEvents)[number]>;

export const trustEvents = [...agentEvents, ...joinTokenEvents, ...refusalEvents, ...ramdiskBootEvents] as const;
export type TrustEvent = EventOf<(typeof trustEvents)[number]>;
