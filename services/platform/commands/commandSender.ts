import { createHash, type KeyObject } from 'node:crypto';
import type { Msg, MsgHdrs } from '@nats-io/transport-node';
import { CommandHeaders, commandSigningText, type CommandSigningFields } from '../../../schemas/commandHeaders.ts';
import { PlatformError } from '../../../schemas/platformError.ts';
import { jwtClaims, jwtSignatureHolds, nkeyPublicKey, verifyEd25519, type ConnectionIdentity, type UserClaims } from '../nats/connectionIdentity.ts';

/** How far a command's signing time may be from the responder's clock: a captured request replays no later than this. */
export const COMMAND_FRESHNESS_MS = 60_000;
/** The role tag of control-plane user JWTs (`services/trust/broker/`): the only role that may send commands. */
const CONTROL_PLANE_TAG = 'role:control-plane';

const bodyDigest = (body: Uint8Array) => createHash('sha256').update(body).digest('base64url');

/**
 * Signs a command request as `identity` (the sending process's broker credential): its JWT, the time, and the
 * signature over the command as sent (`commandSigningText`) go in its headers.
 */
export function signCommand(identity: ConnectionIdentity, fields: Omit<CommandSigningFields, 'sentAt' | 'bodySha256'>, body: Uint8Array, h: MsgHdrs): void {
  const sentAt = String(Date.now());
  const text = commandSigningText({ ...fields, sentAt, bodySha256: bodyDigest(body) });
  h.set(CommandHeaders.sender, identity.jwt);
  h.set(CommandHeaders.sentAt, sentAt);
  h.set(CommandHeaders.senderSignature, identity.sign(new TextEncoder().encode(text)).toString('base64url'));
}

interface KnownSender {
  readonly claims: UserClaims;
  readonly key: KeyObject;
}

/**
 * Who sent a command request, as its events record it (`metadata.actor`). nats-server 2.9 names no sender inside an
 * account, so under broker auth (the responder itself holds a credential) a request counts only when it carries a
 * control-plane user JWT signed by the same account key as the responder's own, and that user's signature over the
 * command as sent, made within `COMMAND_FRESHNESS_MS`: the actor is then `nats:control-plane:<JWT name>:<user key>`.
 * Any other request is refused (`COMMAND_SENDER_UNPROVEN`). A verbatim replay within that time carries the same
 * command id, so it is answered as the duplicate it is. Without broker auth nothing can be proven: `nats:anonymous`.
 */
export class CommandSenders {
  readonly #known = new Map<string, KnownSender>();

  constructor(private readonly own: ConnectionIdentity | undefined) {}

  actorOf(msg: Msg, name: string, nowMs = Date.now()): string {
    if (!this.own) return 'nats:anonymous';
    const header = (h: string) => msg.headers?.get(h) || undefined;
    const [jwt, sentAt, signature, commandId] = [CommandHeaders.sender, CommandHeaders.sentAt, CommandHeaders.senderSignature, CommandHeaders.commandId].map(
      header,
    );
    if (!jwt || !sentAt || !signature || !commandId)
      throw unproven(`${name} is not signed by its sender (${CommandHeaders.sender}, ${CommandHeaders.senderSignature})`);
    const sender = this.#sender(jwt);
    if (!sender) throw unproven(`the ${CommandHeaders.sender} of ${name} is no control-plane credential of this broker`);
    if (sender.claims.exp !== undefined && sender.claims.exp * 1000 <= nowMs) throw unproven(`the credential that signed ${name} expired`);
    if (!(Math.abs(nowMs - Number(sentAt)) <= COMMAND_FRESHNESS_MS))
      throw unproven(`${name} was signed at ${sentAt}, not within ${COMMAND_FRESHNESS_MS} ms of now`);
    const text = commandSigningText({
      name,
      commandId,
      correlationId: header(CommandHeaders.correlationId),
      causationId: header(CommandHeaders.causationId),
      lease: header(CommandHeaders.lease),
      sentAt,
      bodySha256: bodyDigest(msg.data),
    });
    if (!verifyEd25519(new TextEncoder().encode(text), sender.key, Buffer.from(signature, 'base64url'))) {
      throw unproven(`the signature on ${name} does not verify for ${sender.claims.sub}: altered, or not its own`);
    }
    return `nats:control-plane:${sender.claims.name ?? 'unnamed'}:${sender.claims.sub}`;
  }

  /** A control-plane user JWT issued by the responder's own account signing key (verified once, then remembered). */
  #sender(jwt: string): KnownSender | undefined {
    const known = this.#known.get(jwt);
    if (known) return known;
    const own = this.own!.claims;
    const claims = jwtClaims(jwt);
    if (!claims || claims.iss !== own.iss || claims.nats?.issuer_account !== own.nats?.issuer_account) return undefined;
    if (!claims.nats?.tags?.includes(CONTROL_PLANE_TAG) || !jwtSignatureHolds(jwt, own.iss)) return undefined;
    let key: KeyObject;
    try {
      key = nkeyPublicKey(claims.sub);
    } catch {
      return undefined;
    }
    // A handful of processes send commands; a bound keeps a flood of valid but distinct JWTs from growing it.
    if (this.#known.size >= 1_000) this.#known.clear();
    const sender = { claims, key };
    this.#known.set(jwt, sender);
    return sender;
  }
}

const unproven = (detail: string) => new PlatformError('COMMAND_SENDER_UNPROVEN', detail);
