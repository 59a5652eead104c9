import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startTestNats } from '../support/natsServer.ts';

// The module nats.js' request code takes RequestError from (it reads the export at each use).
const require = createRequire(import.meta.url);
const natsErrors = require(join(dirname(require.resolve('@nats-io/nats-core/internal')), 'errors.js')) as { RequestError: new (...args: any[]) => Error };
const OriginalRequestError = natsErrors.RequestError;

/** Counts the RequestErrors nats.js constructs while `body` runs. */
async function countRequestErrors(body: () => Promise<void>): Promise<number> {
  let made = 0;
  natsErrors.RequestError = class CountedRequestError extends OriginalRequestError {
    constructor(...args: any[]) {
      super(...args);
      made++;
    }
  };
  try {
    await body();
  } finally {
    natsErrors.RequestError = OriginalRequestError;
  }
  return made;
}

afterEach(() => {
  natsErrors.RequestError = OriginalRequestError;
});

describe('answered NATS requests', () => {
  it('allocate no error object when they succeed, and still fail with one when nobody answers', async () => {
    await using server = await startTestNats();
    const nc = await connectNats(server.url, 'answered-requests-test');
    try {
      nc.subscribe('echo', {
        callback: (_err, msg) => {
          msg.respond(msg.data);
        },
      });
      await nc.flush();
      const made = await countRequestErrors(async () => {
        for (let i = 0; i < 50; i++) expect((await nc.request('echo', `m${i}`, { timeout: 5_000 })).string()).toBe(`m${i}`);
      });
      expect(made).toBe(0);

      await expect(nc.request('nobody.listens', 'x', { timeout: 2_000 })).rejects.toBeInstanceOf(Error);
      nc.subscribe('silent', { callback: () => undefined });
      await expect(nc.request('silent', 'x', { timeout: 200 })).rejects.toBeInstanceOf(Error);
      // The connection's mux forgot every finished request: nothing is left waiting.
      expect((await nc.request('echo', 'after', { timeout: 5_000 })).string()).toBe('after');
    } finally {
      await nc.close();
    }
  });
});
