import type { CommandResult } from '../../../schemas/api.ts';
import type { JoinAttestorName } from '../../../schemas/trust/joinTokens.ts';
import { generateJoinToken, type JoinExpectation, type JoinRole } from '../../../schemas/trust/joinTokens.ts';

/** Sends one command and returns its result: a CommandBus in-process or `sendCommand` over NATS. */
export type CommandSender = (name: string, payload: unknown, commandId: string) => Promise<CommandResult>;

export interface JoinTokenSpec {
  role: JoinRole;
  siteId: string;
  nodeId?: string;
  ttlSeconds?: number;
  expiresAt?: string;
  expect?: JoinExpectation;
  attestor?: JoinAttestorName;
}

export interface MintedJoinToken {
  /** `bcj_<tokenId>_<secret>`: hand it to the joiner once; it is not stored anywhere and must never be logged. */
  readonly token: string;
  readonly tokenId: string;
  readonly expiresAt: string;
}

/**
 * The issuer's side of a join token: the secret is generated here and only its hash is sent (`pki.createJoinToken`,
 * or `siteTokens.create` for a site), so no command, event or read model ever holds the token.
 */
export async function mintJoinToken(send: CommandSender, spec: JoinTokenSpec): Promise<MintedJoinToken> {
  const { token, tokenId, hash } = generateJoinToken();
  const expiry = spec.expiresAt !== undefined ? { expiresAt: spec.expiresAt } : spec.ttlSeconds !== undefined ? { ttlSeconds: spec.ttlSeconds } : {};
  const result =
    spec.role === 'site'
      ? await send('siteTokens.create', { tokenId, hash, siteId: spec.siteId, ...expiry }, `mint-${tokenId}`)
      : await send(
          'pki.createJoinToken',
          {
            tokenId,
            hash,
            role: spec.role,
            siteId: spec.siteId,
            nodeId: spec.nodeId,
            ...expiry,
            ...(spec.expect ? { expect: spec.expect } : {}),
            ...(spec.attestor ? { attestor: spec.attestor } : {}),
          },
          `mint-${tokenId}`,
        );
  const created = result.events.find((e) => e.type === 'JoinTokenCreated')?.data as { expiresAt: string } | undefined;
  return { token, tokenId, expiresAt: created?.expiresAt ?? '' };
}
