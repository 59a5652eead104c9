import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeAgent, type NodeAgent } from '../../daemon/node/nodeAgent.ts';
import { agentCommand, log, serveBytes, startAgentBackbone } from './harness.ts';
import { moduleBundle } from './moduleSupport.ts';

describe('bcd node runs module.apply and module.remove through its command path', () => {
  let env: Awaited<ReturnType<typeof startAgentBackbone>>;
  let agent: NodeAgent;
  const stateDir = mkdtempSync('/var/tmp/bc-node-modules-');

  beforeAll(async () => {
    env = await startAgentBackbone();
    agent = await startNodeAgent(env.nc, { siteId: 'dc1', nodeId: 'n1', stateDir, bootId: () => 'boot-a', log });
    await agent.registered;
  });
  afterAll(async () => {
    await agent?.stop();
    await env?.[Symbol.asyncDispose]();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('applies a bundle fetched by URL and answers a signed result; a tampered bundle is answered with the verifier code', async () => {
    const v1 = moduleBundle('1.0.0');
    await using served = await serveBytes(v1.bundle);
    const apply = agentCommand('module.apply', { params: { ...v1.params, bundleUrl: served.url, bundleSha256: served.sha256 } });
    await env.publish(apply);
    const verdict = await env.result(apply);
    expect(verdict).toMatchObject({ ok: true, result: { ok: true, payload: { module: 'resolver', version: '1.0.0', changed: true, state: 'active' } } });
    expect(readlinkSync(join(stateDir, 'modules/resolver/current'))).toBe('1.0.0');

    const v2 = moduleBundle('1.1.0');
    const tampered = Buffer.from(v2.bundle);
    tampered[tampered.indexOf('version 1.1.0')] = 'V'.charCodeAt(0);
    await using bad = await serveBytes(tampered);
    const refused = agentCommand('module.apply', { params: { ...v2.params, bundleUrl: bad.url, bundleSha256: bad.sha256 } });
    await env.publish(refused);
    expect(await env.result(refused)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'BUNDLE_FILE_MISMATCH' } });
    expect(readlinkSync(join(stateDir, 'modules/resolver/current'))).toBe('1.0.0');

    const remove = agentCommand('module.remove', { params: { module: 'resolver' } });
    await env.publish(remove);
    expect(await env.result(remove)).toMatchObject({ ok: true, result: { ok: true, payload: { module: 'resolver', removed: true, drift: [] } } });
  });
});
