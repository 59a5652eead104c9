import { createHash } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import type { DeadLetterPage } from '../../schemas/deadLetters.ts';
import { waitForCheckpoint } from '../properties/harness.ts';
import { startApi } from '../support/apiFixture.ts';

describe('the dead-letter record', () => {
  it('an operator token cannot erase the record of a forged message: handling it keeps it, with who and when (issue 31, item 12)', async () => {
    await using env = await startApi();
    const { app } = env;
    const forged = '{"type":"ApiTokenCreated","data":{"role":"admin"}}';
    // A raw publish on the log, as a leaked control-plane credential could make it: the projectors set it aside.
    const published = await jetstream(env.nc).publish('bc.evt.auth.token.evil', forged);
    await waitForCheckpoint(env.projectors.get('tokens')!, published.seq);
    const operator = (await app.inject({ method: 'POST', url: '/v1/tokens', payload: { tokenId: 'op-1', role: 'operator' } })).json().token as string;
    const asOperator = { authorization: `Bearer ${operator}` };
    const list = async (query: string) => (await app.inject({ url: `/v1/dead-letters?${query}`, headers: asOperator })).json<DeadLetterPage>().items;
    const [entry] = await list('consumer=projectors');
    expect(entry).toMatchObject({ streamSeq: published.seq, reason: 'MAC_MISSING', payloadSha256: createHash('sha256').update(forged).digest('hex') });

    // What used to purge the stream's entries is gone; handling keeps them.
    expect((await app.inject({ method: 'DELETE', url: '/v1/dead-letters', headers: asOperator })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/v1/dead-letters/handle?consumer=projectors', headers: asOperator })).json()).toEqual({ handled: 1 });
    expect(await list('consumer=projectors')).toEqual([]);
    const [handled] = await list('consumer=projectors&handled=true');
    const { seq: _seq, ...recorded } = entry!;
    expect(handled).toMatchObject({ ...recorded, handled: { by: 'token:op-1' } });
    expect((await app.inject({ url: '/readyz' })).json()).toMatchObject({ deadLetters: 0 });
  });
});
