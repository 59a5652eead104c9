import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinPolicies } from '../../services/autonomy/policies.ts';
import { unnamedControls } from '../support/accessibility.ts';
import { apiClient } from '../support/apiClient.ts';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

/** Three machines: tenant acme deploys sim-m001, tenant globex sim-m002, sim-m003 stays free. */
describe('web console by role', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    rig = await startConsoleRig(3);
    const { stack, image } = rig;
    for (const n of ['sim-m001', 'sim-m002', 'sim-m003']) await stack.admin.waitForNodeState(n, 'ready', 300_000);
    tokens.acme = await stack.createToken('acme', 'tenant', 'acme');
    tokens.globex = await stack.createToken('globex', 'tenant', 'globex');
    tokens.viewer = await stack.createToken('watcher', 'viewer');
    for (const [tenant, nodeId] of [
      ['acme', 'sim-m001'],
      ['globex', 'sim-m002'],
    ] as const) {
      const deploy = await apiClient(stack.api, tokens[tenant]!).command('metal.deploy', {
        nodeId,
        imageUrl: image.url,
        imageSha256: image.sha256,
        role: 'host',
      });
      expect(deploy.status).toBe(201);
    }
    await stack.admin.waitForNodeState('sim-m001', 'deployed', 300_000);
    await stack.admin.waitForNodeState('sim-m002', 'deployed', 300_000);
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it("shows a tenant its own nodes only, and none of another tenant's even at a typed-in URL", { timeout: 120_000 }, async () => {
    const { page, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, tokens.acme!, '/nodes');
    await page.getByText('1 node', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-node]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-node')))).toEqual(['sim-m001']);
    await screenshot('tenant-nodes');
    await page.goto(`${rig.stack.api}/`);
    await expect.poll(() => page.getByTestId('total-Nodes').textContent(), { timeout: 10_000 }).toBe('1');
    // The navigation offers what a tenant's token may read.
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual(['Fleet overview', 'Nodes', 'Trends', 'VPS']);

    const other = await rig.stack.admin.node('sim-m002');
    for (const nodeId of ['sim-m002', 'sim-m003']) {
      await page.goto(`${rig.stack.api}/nodes/${nodeId}`);
      await page.getByRole('alert').waitFor({ timeout: 10_000 });
      expect(await page.getByRole('alert').textContent()).toMatch(/^NOT_FOUND/);
    }
    const body = (await page.locator('body').textContent()) ?? '';
    for (const fact of [other.bmcAddress, ...other.macs, other.inventory.serial]) expect(body).not.toContain(fact);
    expect(await page.getByRole('button', { name: /Deploy|Release|Rescue/ }).count()).toBe(0);
    await screenshot('tenant-typed-url');

    // Its own node it may act on.
    await page.goto(`${rig.stack.api}/nodes/sim-m001`);
    await page.getByRole('group', { name: 'Node actions' }).waitFor();
    expect(await page.getByRole('group', { name: 'Node actions' }).getByRole('button').allTextContents()).toEqual(['Release', 'Rescue']);
  });

  it("draws a tenant the trends of its own deploy, not another tenant's", { timeout: 120_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, tokens.acme!, '/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trends' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trends' }).waitFor();
    await page.getByText('The operations of tenant acme only').waitFor();
    // globex deployed too, at the same site and in the same hours: acme's chart counts its own deploy alone.
    const chart = page.getByRole('figure', { name: 'Deploys and releases per hour' }).getByRole('img');
    await expect
      .poll(() => chart.getAttribute('aria-label'), { timeout: 30_000 })
      .toBe(
        'Deploys and releases per hour: deploys started 1, deploys completed 1, deploys failed 0, releases started 0, releases completed 0, releases failed 0',
      );
    const drawn = await page.evaluate<number>(`(() => {
      const canvas = document.querySelector('[data-chart="operations"] canvas');
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
      return n;
    })()`);
    expect(drawn).toBeGreaterThan(500);
    expect(await page.getByRole('table', { name: 'Steps over the range' }).locator('tr[data-step="image.write"] td').first().textContent()).toBe('1');
    await screenshot('tenant-trends');
    expect(consoleErrors).toEqual([]);
  });

  it('gives a viewer no action anywhere', { timeout: 120_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, tokens.viewer!, '/nodes/sim-m003');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/sim-m003\s*ready/);
    for (const nodeId of ['sim-m003', 'sim-m001']) {
      await page.goto(`${rig.stack.api}/nodes/${nodeId}`);
      await page.getByRole('heading', { name: 'History' }).waitFor();
      expect(await page.getByRole('group', { name: 'Node actions' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /^(Deploy|Release|Rescue|Leave rescue|Maintenance on|Maintenance off|Retry)$/ }).count()).toBe(0);
    }
    await screenshot('viewer-node');
    await page.goto(`${rig.stack.api}/approvals`);
    await page.getByText('Only an approver token').waitFor();
    expect(await page.getByRole('button', { name: /Approve|Reject|Load key/ }).count()).toBe(0);

    // Autonomy: listed for staff, the declared policies in force, and no way for a viewer to answer a request.
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toContain('Autonomy');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Autonomy' }).click();
    await page.getByRole('heading', { level: 1, name: 'Autonomy' }).waitFor();
    const policies = page.getByRole('table', { name: 'Autonomy policies' });
    await policies.waitFor({ timeout: 10_000 });
    expect(await policies.locator('[data-category]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-category')))).toEqual(
      builtinPolicies.map((p) => p.category),
    );
    const retry = builtinPolicies.find((p) => p.category === 'retry')!;
    expect(await policies.locator('[data-category="retry"] td').allTextContents()).toEqual(
      expect.arrayContaining([retry.owner, retry.disposition, retry.description]),
    );
    await page.getByText('Only an approver or admin token').waitFor();
    await page.getByRole('heading', { name: 'Budgets' }).waitFor();
    expect(await page.getByRole('button', { name: /Approve|Reject/ }).count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: 'Action' }).count()).toBe(0);
    expect(await unnamedControls(page)).toEqual([]);
    await screenshot('viewer-autonomy');
    expect(consoleErrors).toEqual([]);
  });

  it('returns to sign-in once the token is revoked', { timeout: 60_000 }, async () => {
    const token = await rig.stack.createToken('short-lived', 'operator');
    const { page, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, token, '/');
    const revoked = await fetch(`${rig.stack.api}/v1/tokens/short-lived`, { method: 'DELETE', headers: { authorization: `Bearer ${rig.stack.adminToken}` } });
    expect(revoked.ok).toBe(true);
    // The next request the console makes notices the revocation: the one this click makes, unless a background one
    // (the live event stream reconnecting, a page reloading) came first and the link is already gone. Either way the
    // console must end on the sign-in page with its notice.
    const signInForm = page.getByLabel('API token');
    await Promise.race([
      page
        .getByRole('link', { name: 'Nodes' })
        .click({ timeout: 10_000 })
        .catch(() => undefined),
      signInForm.waitFor({ timeout: 10_000 }),
    ]);
    await signInForm.waitFor({ timeout: 10_000 });
    expect(await page.getByRole('status').textContent()).toMatch(/no longer valid/);
    expect(await page.evaluate("sessionStorage.getItem('bc-console-token')")).toBeNull();
    await screenshot('revoked');
  });
});
