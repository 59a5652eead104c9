import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleOf, newPublisher } from '../fleet/bundleFixture.ts';
import { launchChromium } from '../support/chromium.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { signIn, startConsoleStack } from '../support/consoleStack.ts';

const hosts = ['web-1', 'web-2'];
const rolloutId = 'nginx-1';

function approverKeys() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * Issue 35: an approver answers a rollout awaiting approval in the console, signing in the page with a key that never
 * leaves it (the same key form as a workflow's batch). Alice's approval counts 1 of 2; bob's signed rejection ends it.
 */
describe('web console: an approver approves and rejects a rollout awaiting approval', () => {
  let stack: Awaited<ReturnType<typeof startConsoleStack>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const acme = newPublisher('acme');
  const alice = approverKeys();
  const bob = approverKeys();

  const admin = async (method: string, path: string, body: unknown, contentType = 'application/json') => {
    const res = await fetch(`${stack.api}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': contentType },
      body: body instanceof Uint8Array ? Buffer.from(body) : JSON.stringify(body),
    });
    const answer = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  const read = async (path: string) =>
    (await (await fetch(`${stack.api}${path}`, { headers: { authorization: `Bearer ${stack.adminToken}` } })).json()) as Record<string, unknown>;

  beforeAll(async () => {
    const [startedStack, startedBrowser] = await Promise.allSettled([startConsoleStack(0), launchChromium()] as const);
    if (startedStack.status === 'fulfilled') stack = startedStack.value;
    if (startedBrowser.status === 'fulfilled') browser = startedBrowser.value;
    for (const r of [startedStack, startedBrowser]) if (r.status === 'rejected') throw r.reason;
    await admin('POST', '/v1/commands/site.create', { siteId: 'dc1', name: 'DC 1' });
    for (const nodeId of hosts) await admin('POST', '/v1/commands/metal.enroll', enrollPayload(nodeId));
    await admin('POST', '/v1/commands/pki.registerPublisher', { publisherId: 'acme', publicKey: acme.publicKey });
    for (const version of ['1.24.0', '1.26.1']) {
      const bundle = bundleOf(acme, { name: 'nginx', version, provides: ['http'], requires: [], exclusive: [] });
      const { sha256 } = await admin('PUT', '/v1/modules/bundles', bundle, 'application/octet-stream');
      await admin('POST', '/v1/modules/nginx/versions', { version, bundleSha256: sha256 });
    }
    await admin('POST', '/v1/commands/fleet.defineTemplate', { templateId: 'web', requires: [{ module: 'nginx', range: '^1.24' }] });
    let seq = 0;
    for (const nodeId of hosts) {
      const assigned = await admin('POST', '/v1/commands/fleet.assignTemplate', { nodeId, template: 'web', pins: [{ module: 'nginx', version: '1.24.0' }] });
      seq = assigned.seq as number;
    }
    await admin('POST', '/v1/commands/pki.setApprovers', {
      approvers: [
        { approverId: 'alice', publicKey: alice.publicKey },
        { approverId: 'bob', publicKey: bob.publicKey },
      ],
      threshold: 2,
    });
    const plan = {
      module: 'nginx',
      fromVersion: '1.24.0',
      toVersion: '1.26.1',
      canarySize: 1,
      wavePercent: 50,
      maxConsecutiveFailures: 2,
      waveTimeoutMs: 3_600_000,
    };
    const rollout = await admin('POST', `/v1/rollouts?minSeq=${seq}`, plan);
    expect((rollout.events as { data: { rolloutId: string; approvalsRequired: number } }[])[0]!.data).toMatchObject({ rolloutId, approvalsRequired: 2 });
  }, 600_000);
  afterAll(async () => {
    await browser?.[Symbol.asyncDispose]();
    await stack?.[Symbol.asyncDispose]();
  });

  it('signs in the page: alice approves (1 of 2), bob rejects and the rollout ends; no key leaves the page', { timeout: 300_000 }, async () => {
    const approverToken = await stack.createToken('approvers', 'approver');
    const { page, consoleErrors, screenshot } = await browser.newPage();
    const sent: string[] = [];
    page.on('request', (r) => sent.push(`${r.url()} ${r.postData() ?? ''}`));
    await signIn(page, stack.api, approverToken, `/rollouts/${rolloutId}`);
    const status = page.locator('p[role="note"]');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 15_000 }).toBe('awaiting-approval');
    expect(await status.textContent()).toMatch(/0 of 2 approvers signed .* the request expires at \S+Z/);
    // An approver sends no operator verb: only the verdicts, once a key is loaded.
    expect(await page.getByRole('group', { name: 'Rollout actions' }).count()).toBe(0);

    const load = async (approverId: string, pem: string) => {
      await page.getByLabel('Approver id').fill(approverId);
      await page.getByLabel('Ed25519 private key (PKCS#8 PEM)').fill(pem);
      await page.getByRole('button', { name: 'Load key' }).click();
      await page.getByText(`Signing as approver ${approverId}`).waitFor();
    };
    await load('alice', alice.pem);
    await page.getByRole('group', { name: 'Rollout approval' }).getByRole('button', { name: 'Approve' }).click();
    await page
      .getByRole('dialog', { name: `Approve: rollout ${rolloutId}` })
      .getByRole('button', { name: 'Sign and approve' })
      .click();
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toMatch(/1 of 2 approvers signed its plan digest \(alice\)/);
    await screenshot('rollout-approved-once');

    await page.getByRole('button', { name: 'Forget key' }).click();
    await load('bob', bob.pem);
    await page.getByRole('group', { name: 'Rollout approval' }).getByRole('button', { name: 'Reject' }).click();
    await page
      .getByRole('dialog', { name: `Reject: rollout ${rolloutId}` })
      .getByRole('button', { name: 'Sign and reject' })
      .click();
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 15_000 }).toBe('rejected');
    expect(await status.textContent()).toBe('Rejected by bob: no host was touched.');
    expect(await page.getByRole('group', { name: 'Rollout approval' }).count()).toBe(0);
    await screenshot('rollout-rejected');
    expect(await read(`/v1/rollouts/${rolloutId}`)).toMatchObject({ status: 'rejected', rejectedBy: 'bob', approvals: ['alice'], startedWaves: 0 });

    for (const pem of [alice.pem, bob.pem]) {
      const pemBody = pem.split('\n')[1]!;
      expect(sent.filter((r) => r.includes(pemBody) || r.includes('PRIVATE KEY'))).toEqual([]);
    }
    expect(consoleErrors).toEqual([]);
  });
});
