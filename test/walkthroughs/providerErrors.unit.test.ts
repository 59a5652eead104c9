import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { ProviderError, classifyHttpFailure, clientTokenOf, withTransientRetry } from 'better-compute/sdk';

describe('classifyHttpFailure', () => {
  test.each([
    [401, 'configuration', 'PROVIDER_CONFIGURATION'],
    [403, 'configuration', 'PROVIDER_CONFIGURATION'],
    [404, 'not-found', 'PROVIDER_NOT_FOUND'],
    [408, 'transient', 'PROVIDER_UNAVAILABLE'],
    [425, 'transient', 'PROVIDER_UNAVAILABLE'],
    [429, 'transient', 'PROVIDER_UNAVAILABLE'],
    [500, 'transient', 'PROVIDER_UNAVAILABLE'],
    [503, 'transient', 'PROVIDER_UNAVAILABLE'],
    [400, 'rejected', 'PROVIDER_REJECTED'],
    [409, 'rejected', 'PROVIDER_REJECTED'],
    [422, 'rejected', 'PROVIDER_REJECTED'],
  ] as const)('maps HTTP %i to %s', (status, kind, code) => {
    const error = classifyHttpFailure(status, '{"error":"x"}');
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.name).toBe('ProviderError');
    expect([error.kind, error.code, error.status]).toEqual([kind, code, status]);
  });

  test('reads Retry-After in seconds on a transient answer', () => {
    expect(classifyHttpFailure(429, '', '3').retryAfterMs).toBe(3000);
    expect(classifyHttpFailure(503, '').retryAfterMs).toBeUndefined();
  });

  test('reads Retry-After as an HTTP date', () => {
    const at = new Date(Date.now() + 60_000).toUTCString();
    expect(classifyHttpFailure(503, '', at).retryAfterMs).toBeGreaterThan(0);
  });

  test('quotes at most 200 characters of the body', () => {
    const error = classifyHttpFailure(500, 'x'.repeat(1000));
    expect(error.message).toBe(`HTTP 500: ${'x'.repeat(200)}`);
  });
});

describe('withTransientRetry', () => {
  test('retries transient failures until the call succeeds', async () => {
    let calls = 0;
    const result = await withTransientRetry(
      async () => {
        calls++;
        if (calls < 3) throw classifyHttpFailure(503, 'busy');
        return 'done';
      },
      { backoffMs: 0 },
    );
    expect([result, calls]).toEqual(['done', 3]);
  });

  test('throws a non-transient failure at once', async () => {
    let calls = 0;
    const failing = withTransientRetry(
      async () => {
        calls++;
        throw classifyHttpFailure(401, 'bad token');
      },
      { backoffMs: 0 },
    );
    await expect(failing).rejects.toMatchObject({ code: 'PROVIDER_CONFIGURATION' });
    expect(calls).toBe(1);
  });

  test('throws an error that is not a ProviderError at once', async () => {
    let calls = 0;
    await expect(
      withTransientRetry(async () => {
        calls++;
        throw new TypeError('bug');
      }),
    ).rejects.toThrow(TypeError);
    expect(calls).toBe(1);
  });

  test('gives up after the configured attempts with the last transient error', async () => {
    let calls = 0;
    const failing = withTransientRetry(
      async () => {
        calls++;
        throw classifyHttpFailure(502, `attempt ${calls}`);
      },
      { attempts: 3, backoffMs: 0 },
    );
    await expect(failing).rejects.toMatchObject({ kind: 'transient', message: 'HTTP 502: attempt 3' });
    expect(calls).toBe(3);
  });

  test('stops retrying once its signal is aborted', async () => {
    const controller = new AbortController();
    let calls = 0;
    const failing = withTransientRetry(
      async () => {
        calls++;
        controller.abort(new Error('shutting down'));
        throw classifyHttpFailure(503, '');
      },
      { backoffMs: 0, signal: controller.signal },
    );
    await expect(failing).rejects.toThrow('shutting down');
    expect(calls).toBe(1);
  });
});

describe('clientTokenOf', () => {
  test('is bc- and the first 32 hex digits of the id’s SHA-256', () => {
    const expected = `bc-${createHash('sha256').update('inst-42').digest('hex').slice(0, 32)}`;
    expect(clientTokenOf('inst-42')).toBe(expected);
    expect(clientTokenOf('inst-42')).toMatch(/^bc-[0-9a-f]{32}$/);
  });

  test('gives different instances different tokens', () => {
    expect(clientTokenOf('inst-1')).not.toBe(clientTokenOf('inst-2'));
  });
});
