import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { ClosedConnectionError, ConnectionError, DrainingConnectionError, NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { PlatformError } from '../../../schemas/platformError.ts';

const transportErrors = [
  TimeoutError,
  ConnectionError,
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  // Also behind "jetstream is not enabled", which the client reports for no responders while JetStream starts.
  RequestError,
  // Status errors of a pull (heartbeats missed, consumer deleted with the server's state): the pull can be reopened.
  JetStreamError,
];

/**
 * True when `err` (or an error it wraps) says the server could not be reached or did not answer in time, as while
 * it restarts or a leader moves: the operation may be tried again as it was. A JetStream API refusal is not one,
 * except "temporarily unavailable" (503) while JetStream recovers its streams.
 */
export function isTransportFailure(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof JetStreamApiError) return e.status === 503;
    if (e instanceof PlatformError) return e.code === 'UNAVAILABLE';
    if (transportErrors.some((type) => e instanceof type)) return true;
  }
  return false;
}
