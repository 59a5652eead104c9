import type { NatsConnection } from '@nats-io/transport-node';
import { isErrorCode } from '../../schemas/errorCodes.ts';
import { BootTokenReply, signBootTokenRequest } from '../../schemas/trust/bootToken.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { AgentIdentity } from '../agent/identity.ts';
import type { BootTicket } from './bootTickets.ts';

/**
 * Asks the control plane for the single-use ramdisk join token of the boot `ticket` was minted for (signed with the
 * site agent's key). The token goes on the machine's kernel line and nowhere else: not in a log, a file or an agent
 * command. With `refetch`, reports a second fetch of the ticket instead (answered BOOT_CONTESTED). Throws a
 * PlatformError: BOOT_TOKEN_NOT_DUE when no workflow of the machine is booting a ramdisk, BOOT_TOKEN_NOT_THIS_BOOT
 * for another boot than the workflow's current one, BOOT_CONTESTED, UNAVAILABLE when nobody answered.
 */
export async function requestBootJoinToken(
  nc: NatsConnection,
  requester: { agentId: string; identity: Pick<AgentIdentity, 'privateKey' | 'publicKeyRaw'> },
  ticket: Pick<BootTicket, 'nodeId' | 'ticketId' | 'boot'>,
  options: { timeoutMs?: number; refetch?: boolean } = {},
): Promise<string> {
  const { nodeId, ticketId, boot } = ticket;
  const request = {
    agentId: requester.agentId,
    nodeId,
    issuedAt: new Date().toISOString(),
    boot: { ...boot, ticketId },
    ...(options.refetch ? { refetch: true } : {}),
  };
  const signed = signBootTokenRequest(request, requester.identity);
  let body: unknown;
  try {
    body = (await nc.request(Subjects.bootJoinToken, JSON.stringify(signed), { timeout: options.timeoutMs ?? 5_000 })).json();
  } catch (cause) {
    throw new PlatformError('UNAVAILABLE', 'no answer to the boot token request', { cause });
  }
  const reply = BootTokenReply.safeParse(body);
  if (!reply.success) throw new PlatformError('INTERNAL', 'the boot token answer does not match the contract');
  if (reply.data.ok) return reply.data.token;
  throw new PlatformError(isErrorCode(reply.data.error.code) ? reply.data.error.code : 'INTERNAL', reply.data.error.detail);
}
