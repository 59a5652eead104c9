import { describe, expect, it } from 'vitest';
import { startApi } from '../support/apiFixture.ts';

describe('read-your-writes (?minSeq=)', () => {
  it('refuses a minSeq beyond the end of the log at once with MIN_SEQ_AHEAD (issue 31, item 12)', async () => {
    // A minute to wait: an answer before the test's own timeout did not wait it out.
    await using env = await startApi({ config: { readYourWritesTimeoutMs: 60_000 } });
    const created = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc1', name: 'DC 1' } });
    const { seq } = created.json<{ seq: number }>();
    expect((await env.app.inject({ url: `/v1/sites/dc1?minSeq=${seq}` })).statusCode).toBe(200);
    for (const url of [`/v1/sites/dc1?minSeq=${seq + 1}`, `/v1/nodes?minSeq=${seq + 10_000}`, `/v1/autonomy/decisions?minSeq=${Number.MAX_SAFE_INTEGER}`]) {
      const ahead = await env.app.inject({ url });
      expect([ahead.statusCode, ahead.json().code]).toEqual([400, 'MIN_SEQ_AHEAD']);
    }
  });

  it('still waits for a position the log holds and the read model has not applied, then answers READ_MODEL_BEHIND', async () => {
    await using env = await startApi({ config: { readYourWritesTimeoutMs: 500 } });
    await env.projectors.get('sites')!.stop();
    const created = await env.app.inject({ method: 'POST', url: '/v1/commands/site.create', payload: { siteId: 'dc1', name: 'DC 1' } });
    const behind = await env.app.inject({ url: `/v1/sites/dc1?minSeq=${created.json<{ seq: number }>().seq}` });
    expect([behind.statusCode, behind.json().code]).toEqual([504, 'READ_MODEL_BEHIND']);
  });
});
