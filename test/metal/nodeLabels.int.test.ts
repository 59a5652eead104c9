import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNodeAgent } from '../../daemon/node/nodeAgent.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startRegistrationService } from '../../services/trust/agent/registrationService.ts';
import { startApi } from '../support/apiFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { deployedNode } from '../support/deployedNode.ts';

describe('node labels over the API', () => {
  it('operators set and remove labels, bc.dev/ stays derived, and the node list selects on both', { timeout: 90_000 }, async () => {
    await using env = await startApi();
    const registrations = startRegistrationService(env.nc, env.store, env.log);
    await deployedNode(env.bus, 'n1');
    let seq = (await env.bus.execute({ name: 'metal.enroll', payload: enrollPayload('n2'), actor: 'test' })).seq;
    const setLabels = (payload: Record<string, unknown>) => env.app.inject({ method: 'POST', url: '/v1/commands/metal.setLabels', payload });
    const selected = async (...terms: string[]) => {
      const query = terms.map((t) => `label=${encodeURIComponent(t)}`).join('&');
      const res = await env.app.inject({ url: `/v1/nodes?minSeq=${seq}&${query}` });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().items as { nodeId: string }[]).map((n) => n.nodeId);
    };

    const set = await setLabels({ nodeId: 'n1', set: { zone: 'a', rack: 'r7' } });
    expect(set.statusCode).toBe(201);
    expect(set.json().events).toMatchObject([{ type: 'NodeLabelsSet', data: { nodeId: 'n1', labels: { rack: 'r7', zone: 'a' } } }]);
    const unchanged = await setLabels({ nodeId: 'n1', set: { zone: 'a' } });
    expect([unchanged.statusCode, unchanged.json().events]).toEqual([200, []]);
    const reserved = await setLabels({ nodeId: 'n1', set: { 'bc.dev/site': 'elsewhere' }, remove: ['zone'] });
    expect([reserved.statusCode, reserved.json().code]).toEqual([422, 'LABEL_RESERVED']);
    const changed = await setLabels({ nodeId: 'n1', set: { zone: 'b' }, remove: ['rack'] });
    expect(changed.statusCode).toBe(201);
    seq = changed.json().seq;
    const history = await env.app.inject({ url: '/v1/events?aggregate=metal.node/n1' });
    expect((history.json().items as { type: string }[]).filter((e) => e.type === 'NodeLabelsSet')).toHaveLength(2);

    const n1 = (await env.app.inject({ url: `/v1/nodes/n1?minSeq=${seq}` })).json();
    expect(n1).toMatchObject({ operatorLabels: { zone: 'b' }, labels: { zone: 'b', 'bc.dev/site': 'dc1' } });
    expect(await selected('zone=b')).toEqual(['n1']);
    expect(await selected('zone=a')).toEqual([]);
    expect(await selected('bc.dev/site=dc1')).toEqual(['n1', 'n2']);
    expect(await selected('bc.dev/site=dc1', 'zone')).toEqual(['n1']);
    expect(await selected('bc.dev/site=dc1,zone=b')).toEqual(['n1']);
    for (const malformed of ['zone==b', 'zone=a b', '']) {
      const res = await env.app.inject({ url: `/v1/nodes?label=${encodeURIComponent(malformed)}` });
      expect([res.statusCode, res.json().code], malformed).toEqual([400, 'LABEL_SELECTOR_INVALID']);
    }

    // The deployed node's bcd node advertises a driver: the node carries its label while the API hears it.
    expect(await selected('bc.dev/driver.crun')).toEqual([]);
    const nc = await connectNats(env.nats.url, 'bcd-node-n1');
    const agent = await startNodeAgent(nc, {
      siteId: 'dc1',
      nodeId: 'n1',
      stateDir: join(env.dataDir, 'host'),
      heartbeatIntervalMs: 300,
      log: env.log,
      drivers: () => [{ id: 'crun', version: '1.8.1', kinds: ['runtime'] }],
    });
    await agent.registered;
    await expect.poll(() => selected('bc.dev/driver.crun'), { timeout: 20_000, interval: 200 }).toEqual(['n1']);
    expect((await env.app.inject({ url: '/v1/nodes/n1' })).json().labels).toMatchObject({ 'bc.dev/driver.crun': '1.8.1', zone: 'b' });
    await agent.stop();
    await nc.close();
    await registrations.stop();
  });
});
