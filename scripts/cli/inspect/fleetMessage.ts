import { decodeSignedResult } from '../../../schemas/agent/agentResultCodec.ts';

/** One message on a `bc.` subject, as a person reads it: its JSON, whatever the wire form was. */
export interface FleetMessage {
  /** When this process received it (ISO 8601). */
  receivedAt: string;
  subject: string;
  /** `json`: JSON on the wire; `agent-result`: a signed protobuf result, decoded (signature not checked); `bytes`: neither. */
  encoding: 'json' | 'agent-result' | 'bytes';
  data: unknown;
}

const agentResultSubject = /^bc\.site\.[^.]+\.res\./;
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes a message the way `nats sub` would show it, but readable: agent results are protobuf (`agentResult.proto`)
 * and come out as their fields with the payload's JSON; everything else on `bc.>` is JSON. Anything that is neither
 * is shown by size and a base64 prefix, never guessed at.
 */
export function decodeFleetMessage(subject: string, data: Uint8Array, receivedAt = new Date()): FleetMessage {
  const base = { receivedAt: receivedAt.toISOString(), subject };
  if (agentResultSubject.test(subject)) {
    try {
      const { result, keyId } = decodeSignedResult(data);
      return { ...base, encoding: 'agent-result', data: { ...result, signedBy: keyId } };
    } catch {
      // Not a signed result after all (a forgery, a stray publish): shown as what it is below.
    }
  }
  try {
    return { ...base, encoding: 'json', data: JSON.parse(decoder.decode(data)) as unknown };
  } catch {
    return { ...base, encoding: 'bytes', data: { bytes: data.length, base64Prefix: Buffer.from(data.subarray(0, 48)).toString('base64') } };
  }
}

/** One line per message: time, subject, compact JSON (what `better-compute tail` prints without `--json`). */
export function fleetLine(message: FleetMessage): string {
  const time = message.receivedAt.slice(11, 23);
  const tag = message.encoding === 'json' ? '' : ` (${message.encoding})`;
  return `${time} ${message.subject}${tag} ${JSON.stringify(message.data)}`;
}
