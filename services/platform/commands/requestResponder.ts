import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { problemOf, toPlatformError } from '../problem.ts';
import type { Logger } from '../logger.ts';
import type { PlatformError } from '../../../schemas/platformError.ts';
import { CommandHeaders } from '../../../schemas/commandHeaders.ts';

/** The header every refusal repeats its stable code in, so a client can branch without parsing the body. */
export const ERROR_CODE_HEADER = CommandHeaders.errorCode;

export interface RequestService {
  subject: string;
  /** Queue group: replicas of the service share the requests. */
  queue: string;
  /** What a request is, for the log: `"join"` gives "join failed" / "join refused". */
  what: string;
  /**
   * Whether refusals (non-INTERNAL codes) are logged at warn: routine for commands, notable for trust requests. A
   * function decides per refusal (a service that counts repeated refusals logs only the ones it records).
   */
  logRefusals: boolean | ((error: PlatformError) => boolean);
  /** Resolves the `{ ok: true, … }` answer, or throws: the error becomes `{ ok: false, error: <problem> }`. */
  handle(msg: Msg): Promise<object>;
}

/** Serves a request-reply subject with the platform's answer shape and error mapping. */
export function serveRequests(nc: NatsConnection, service: RequestService, log: Logger): Subscription {
  const answer = async (msg: Msg) => {
    try {
      msg.respond(JSON.stringify(await service.handle(msg)));
    } catch (err) {
      const error = toPlatformError(err);
      if (error.code === 'INTERNAL') log.error({ err, subject: msg.subject }, `${service.what} failed`);
      else if (typeof service.logRefusals === 'function' ? service.logRefusals(error) : service.logRefusals)
        log.warn({ code: error.code, reason: error.message, subject: msg.subject }, `${service.what} refused`);
      const h = natsHeaders();
      h.set(ERROR_CODE_HEADER, error.code);
      msg.respond(JSON.stringify({ ok: false, error: problemOf(error, msg.subject) }), { headers: h });
    }
  };
  const sub = nc.subscribe(service.subject, { queue: service.queue });
  void (async () => {
    for await (const msg of sub) void answer(msg);
  })();
  return sub;
}
