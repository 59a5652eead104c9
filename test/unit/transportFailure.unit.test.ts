import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { PlatformError } from '../../schemas/platformError.ts';
import { isTransportFailure } from '../../services/platform/nats/transportFailure.ts';
import { RetryableError, TerminalError } from '../../plugins/sdk/stepErrors.ts';

describe('isTransportFailure', () => {
  it('recognises a server that is away, directly or wrapped', () => {
    expect(isTransportFailure(new TimeoutError())).toBe(true);
    expect(isTransportFailure(new Error('jetstream is not enabled', { cause: new RequestError('no responders', { cause: new NoRespondersError('x') }) }))).toBe(
      true,
    );
    expect(isTransportFailure(new PlatformError('UNAVAILABLE', 'event store is unavailable', { cause: new Error('x') }))).toBe(true);
    expect(isTransportFailure(new JetStreamError('heartbeats missed'))).toBe(true);
    expect(isTransportFailure(new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' }))).toBe(true);
  });

  it('leaves refusals and step outcomes alone', () => {
    expect(isTransportFailure(new JetStreamApiError({ code: 400, err_code: 10071, description: 'wrong last sequence' }))).toBe(false);
    expect(isTransportFailure(new TerminalError('VALIDATION_FAILED', 'bad params'))).toBe(false);
    expect(isTransportFailure(new RetryableError('STEP_TIMEOUT', 'late', { cause: new TimeoutError() }))).toBe(false);
    expect(isTransportFailure(new Error('disk on fire'))).toBe(false);
    expect(isTransportFailure('not an error')).toBe(false);
  });
});
