import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/apiClient.ts';
import { launchChromium } from '../support/chromium.ts';
import { signIn, startConsoleStack } from '../support/consoleStack.ts';
import { startImageServer } from '../support/imageServer.ts';

type Stack = Awaited<ReturnType<typeof startConsoleStack>>;
type Browser = Awaited<ReturnType<typeof launchChromium>>;
type ImageServer = Awaited<ReturnType<typeof startImageServer>>;

/** Three machines: tenant acme deploys sim-m001, tenant globex sim-m002, sim-m003 stays free. */
describe('web console by role', () => {
  let stack: Stack;
  let browser: Browser;
  let image: ImageServer;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    [stack, browser, image] = await Promise.all([startConsoleStack(3), launchChromium(), startImageServer()]);
    for (const n of ['sim-m001', 'sim-m002', 'sim-m003']) await stack.admin.waitForNodeState(n, 'ready', 120_000);
    tokens.acme = await stack.createToken('acme', 'tenant', 'acme');
    tokens.globex = await stack.createToken('globex', 'tenant', 'globex');
    tokens.viewer = await stack.createToken('watcher', 'viewer');
    for (const [tenant, nodeId] of [['acme', 'sim-m001'], ['globex', 'sim-m002']] as const) {
      const deploy = await apiClient(stack.api, tokens[tenant]!).command('metal.deploy', { nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'host' });
      expect(deploy.status).toBe(201);
    }
    await stack.admin.waitForNodeState('sim-m001', 'deployed', 180_000);
    await stack.admin.waitForNodeState('sim-m002', 'deployed', 180_000);
  }, 420_000);

  afterAll(async () => {
    await browser?.[Symbol.asyncDispose]();
    await image?.[Symbol.asyncDispose]();
    await stack?.[Symbol.asyncDispose]();
  });

  it("shows a tenant its own nodes only, and none of another tenant's even at a typed-in URL", { timeout: 120_000 }, async () => {
    const { page, screenshot } = await browser.newPage();
    await signIn(page, stack.api, tokens.acme!, '/nodes');
    await page.getByText('1 node', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-node]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-node')))).toEqual(['sim-m001']);
    await screenshot('tenant-nodes');
    await page.goto(`${stack.api}/`);
    await expect.poll(() => page.getByTestId('total-Nodes').textContent(), { timeout: 10_000 }).toBe('1');
    // The navigation offers what a tenant's token may read.
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual(['Fleet overview', 'Nodes', 'VPS']);

    const other = await stack.admin.node('sim-m002');
    for (const nodeId of ['sim-m002', 'sim-m003']) {
      await page.goto(`${stack.api}/nodes/${nodeId}`);
      await page.getByRole('alert').waitFor({ timeout: 10_000 });
      expect(await page.getByRole('alert').textContent()).toMatch(/^NOT_FOUND/);
    }
    const body = (await page.locator('body').textContent()) ?? '';
    for (const fact of [other.bmcAddress, ...other.macs, other.inventory.serial]) expect(body).not.toContain(fact);
    expect(await page.getByRole('button', { name: /Deploy|Release|Rescue/ }).count()).toBe(0);
    await screenshot('tenant-typed-url');

    // Its own node it may act on.
    await page.goto(`${stack.api}/nodes/sim-m001`);
    await page.getByRole('group', { name: 'Node actions' }).waitFor();
    expect(await page.getByRole('group', { name: 'Node actions' }).getByRole('button').allTextContents()).toEqual(['Release', 'Rescue']);
  });

  it('gives a viewer no action anywhere', { timeout: 120_000 }, async () => {
    const { page, consoleErrors, screenshot } = await browser.newPage();
    await signIn(page, stack.api, tokens.viewer!, '/nodes/sim-m003');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/sim-m003\s*ready/);
    for (const nodeId of ['sim-m003', 'sim-m001']) {
      await page.goto(`${stack.api}/nodes/${nodeId}`);
      await page.getByRole('heading', { name: 'History' }).waitFor();
      expect(await page.getByRole('group', { name: 'Node actions' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /^(Deploy|Release|Rescue|Leave rescue|Maintenance on|Maintenance off|Retry)$/ }).count()).toBe(0);
    }
    await screenshot('viewer-node');
    await page.goto(`${stack.api}/approvals`);
    await page.getByText('Only an approver token').waitFor();
    expect(await page.getByRole('button', { name: /Approve|Reject|Load key/ }).count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it('returns to sign-in once the token is revoked', { timeout: 60_000 }, async () => {
    const token = await stack.createToken('short-lived', 'operator');
    const { page, screenshot } = await browser.newPage();
    await signIn(page, stack.api, token, '/');
    const revoked = await fetch(`${stack.api}/v1/tokens/short-lived`, { method: 'DELETE', headers: { authorization: `Bearer ${stack.adminToken}` } });
    expect(revoked.ok).toBe(true);
    await page.getByRole('link', { name: 'Nodes' }).click();
    await page.getByLabel('API token').waitFor({ timeout: 10_000 });
    expect(await page.getByRole('status').textContent()).toMatch(/no longer valid/);
    expect(await page.evaluate("sessionStorage.getItem('bc-console-token')")).toBeNull();
    await screenshot('revoked');
  });
});
