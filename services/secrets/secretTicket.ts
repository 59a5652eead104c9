import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { MasterKey } from './masterKey.ts';

/**
 * What a ticket allows: the site agent that runs command `commandId` for `nodeId` may be granted the secrets `refs`
 * until `notAfter`. The executor issues it into the `site.httpProxy` command that names those secrets as headers; the
 * grant service honours it. Neither the step nor the agent can make one: it is keyed from the master key.
 */
export const SecretTicketClaims = z.object({ commandId: z.string(), nodeId: z.string(), refs: z.array(z.string()).min(1), notAfter: z.string() }).strict();
export type SecretTicketClaims = z.infer<typeof SecretTicketClaims>;

const ticketKey = (masterKey: MasterKey) => Buffer.from(hkdfSync('sha256', masterKey.bytes(), Buffer.alloc(0), 'bc.secret-ticket/v1', 32));

export function issueSecretTicket(masterKey: MasterKey, claims: SecretTicketClaims): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${createHmac('sha256', ticketKey(masterKey)).update(body).digest('base64url')}`;
}

/** The claims of a ticket this master key issued, or undefined for anything else (altered, foreign, malformed). */
export function verifySecretTicket(masterKey: MasterKey, ticket: string): SecretTicketClaims | undefined {
  const [body, mac, extra] = ticket.split('.');
  if (!body || !mac || extra !== undefined) return undefined;
  const expected = createHmac('sha256', ticketKey(masterKey)).update(body).digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    return SecretTicketClaims.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
  } catch {
    return undefined;
  }
}
