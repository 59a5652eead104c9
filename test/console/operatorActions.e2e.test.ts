import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';
import { startImageServer } from '../support/imageServer.ts';

/** Evaluated in the page (the tests compile without the DOM's types). */
const focusedText = "document.activeElement?.textContent ?? ''";

/**
 * Issue 37's defects, as operators and tenants meet them in Chromium: three free machines; tenant initech takes one
 * from the pool (which an operator then cancels), an operator deploys another and puts a third in
 * maintenance.
 */
describe('web console: sessions, the pool, cancel, maintenance and layout', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  let operator: string;
  let tenant: string;
  const machines = ['sim-m001', 'sim-m002', 'sim-m003'];
  /** The machine the tenant took; the operator's tests use the other two. */
  let taken = '';
  const others = () => machines.filter((n) => n !== taken);

  beforeAll(async () => {
    rig = await startConsoleRig(3);
    for (const n of machines) await rig.stack.admin.waitForNodeState(n, 'ready', 300_000);
    operator = await rig.stack.createToken('ops', 'operator');
    tenant = await rig.stack.createToken('initech', 'tenant', 'initech');
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it(
    'lets a tenant with no node take one from the pool, and an operator cancel it, shown as cancelling/cancelled, never failed',
    { timeout: 300_000 },
    async () => {
      const { page, consoleErrors, screenshot } = await rig.browser.newPage();
      await signIn(page, rig.stack.api, tenant, '/nodes');
      await page.getByText('0 nodes', { exact: true }).waitFor({ timeout: 15_000 });
      // The simulated machines come in more than one hardware profile: one row each, three free in all.
      const offers = page.getByRole('table', { name: 'Free nodes you may take' }).locator('tbody tr');
      const free = async () => (await offers.locator('td:nth-child(4)').allTextContents()).reduce((sum, n) => sum + Number(n), 0);
      await expect.poll(free, { timeout: 15_000 }).toBe(3);
      expect(await page.locator('body').textContent()).not.toContain('sim-m00');
      await screenshot('tenant-pool');
      await offers
        .first()
        .getByRole('button', { name: /Deploy a node of/ })
        .click();
      const dialog = page.getByRole('dialog', { name: /Deploy a node of/ });
      // An image that takes over a minute to stream: the cancel lands while image.write runs, not after the deploy ended.
      await using slowImage = await startImageServer(undefined, { bytesPerSecond: 40 * 1024, partitioned: true });
      await dialog.getByLabel('Image URL').fill(slowImage.url);
      await dialog.getByLabel('Image SHA-256').fill(slowImage.sha256);
      await dialog.getByRole('button', { name: 'Deploy' }).click();
      await page.waitForURL(/\/nodes\/sim-m00\d$/, { timeout: 15_000 });
      taken = new URL(page.url()).pathname.split('/').at(-1)!;
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toMatch(new RegExp(`${taken}\\s*deploying`));
      expect(await page.getByRole('group', { name: 'Node actions' }).getByRole('button').allTextContents()).not.toContain('Cancel operation');

      const workflowId = (await rig.stack.admin.node(taken)).workflowId as string;
      expect(workflowId).toMatch(/^wf-/);
      // The tenant's part ends here: once cancelled, the node may no longer be the tenant's, and its page says so.
      expect(consoleErrors).toEqual([]);
      await page.close();
      const ops = await rig.browser.newPage();
      await signIn(ops.page, rig.stack.api, operator, `/nodes/${taken}`);
      // The live page moves while the deploy runs (steps, notices): a click that waits for it to hold still may wait long.
      await ops.page.getByRole('button', { name: 'Cancel operation' }).dispatchEvent('click');
      const confirm = ops.page.getByRole('dialog', { name: `Cancel operation: ${taken}` });
      await confirm.getByLabel('Reason').fill('wrong image');
      await confirm.getByRole('button', { name: 'Cancel operation' }).click();
      // The dialog closes once the API accepted the cancel: navigating before that would abort its request.
      await confirm.waitFor({ state: 'hidden', timeout: 30_000 });
      // Read the workflow's outcome line as it changes: cancelling, then cancelled; "Failed" is never said of it.
      await ops.page.goto(`${rig.stack.api}/workflows/${workflowId}`);
      const seen = new Set<string>();
      await expect
        .poll(
          async () => {
            const outcome = await ops.page
              .locator('[data-outcome]')
              .getAttribute('data-outcome', { timeout: 1_000 })
              .catch(() => null);
            if (outcome) seen.add(outcome);
            return outcome;
          },
          { timeout: 180_000, interval: 200 },
        )
        .toBe('cancelled');
      expect([...seen].filter((o) => o !== 'cancelling' && o !== 'cancelled')).toEqual([]);
      expect(await ops.page.locator('[data-outcome]').textContent()).toBe('Cancelled: wrong image');
      await ops.screenshot('workflow-cancelled');

      await ops.page.goto(`${rig.stack.api}/workflows`);
      await ops.page.getByLabel('State').selectOption('cancelled');
      await ops.page.locator(`a[href="/workflows/${workflowId}"]`).first().waitFor({ timeout: 15_000 });
    },
  );

  it('drops "waiting-for-capacity" from a live node page once its workflow starts, without a reload', { timeout: 400_000 }, async () => {
    const { page, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, operator, `/nodes/${others()[0]}`);
    await page.evaluate('window.notReloaded = true');
    await page.getByRole('button', { name: 'Deploy' }).click();
    const dialog = page.getByRole('dialog', { name: `Deploy ${others()[0]}` });
    await dialog.getByLabel('Image URL').fill(rig.image.url);
    await dialog.getByLabel('Image SHA-256').fill(rig.image.sha256);
    await dialog.getByRole('button', { name: 'Deploy' }).click();
    await expect
      .poll(() => page.locator('table.steps tr[data-step="image.write"]').getAttribute('data-state'), { timeout: 180_000, interval: 200 })
      .toMatch(/running|succeeded/);
    // The steps run: the site gave the deploy its slot, so the node no longer waits for one.
    await expect.poll(() => page.getByText(/^Waiting:/).count(), { timeout: 10_000 }).toBe(0);
    await screenshot('node-deploying');
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 180_000, interval: 250 })
      .toMatch(new RegExp(`${others()[0]}\\s*deployed`));
    expect(await page.evaluate('window.notReloaded')).toBe(true);
  });

  it('offers no Deploy in maintenance (the API refuses it) and returns focus to the button a dialog was opened from', { timeout: 120_000 }, async () => {
    const { page } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, operator, `/nodes/${others()[1]}`);
    const actions = page.getByRole('group', { name: 'Node actions' });
    await expect.poll(() => actions.getByRole('button').allTextContents(), { timeout: 15_000 }).toEqual(['Deploy', 'Rescue', 'Maintenance on', 'Retire']);
    await actions.getByRole('button', { name: 'Maintenance on' }).click();
    const dialog = page.getByRole('dialog', { name: `Maintenance on: ${others()[1]}` });
    await dialog.getByLabel('Reason').fill('fan swap');
    await dialog.getByRole('button', { name: 'Maintenance on' }).click();
    await expect.poll(() => actions.getByRole('button').allTextContents(), { timeout: 15_000 }).toEqual(['Rescue', 'Maintenance off', 'Retire']);
    const refused = await rig.stack.admin.command('metal.deploy', {
      nodeId: others()[1],
      imageUrl: rig.image.url,
      imageSha256: rig.image.sha256,
      role: 'host',
    });
    expect([refused.status, (refused.body as { code?: string }).code]).toEqual([409, 'ILLEGAL_TRANSITION']);

    await actions.getByRole('button', { name: 'Maintenance off' }).click();
    await page.getByRole('dialog', { name: `Maintenance off: ${others()[1]}` }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate(focusedText), { timeout: 5_000 }).toBe('Maintenance off');
  });

  it('fits every page at 390 px and keeps the top bar on one line at 1280 px while reconnecting', { timeout: 300_000 }, async () => {
    const { page, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, operator, '/');
    const pages = ['/', '/nodes', `/nodes/${others()[0]}`, '/workflows', '/approvals', '/vps', '/plugins', '/autonomy'];
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      for (const path of pages) {
        await page.goto(`${rig.stack.api}${path}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        // What the page reads arrives within a moment of its heading; the screenshot should show it.
        await page.waitForTimeout(700);
        // Nothing makes the page wider than the screen: wide tables scroll inside their own box.
        expect([path, width, await page.evaluate('document.documentElement.scrollWidth')]).toEqual([path, width, width]);
        await screenshot(`page${path === '/' ? '-overview' : path.replaceAll('/', '-')}-${width}`);
      }
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${rig.stack.api}/nodes`);
    const name = page.locator('[data-node] a').first();
    await name.waitFor();
    expect(await name.evaluate((link) => link.parentElement!.scrollWidth <= link.parentElement!.clientWidth)).toBe(true);

    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${rig.stack.api}/nodes`);
    await page.locator('.live').evaluate((status) => (status.textContent = 'reconnecting…'));
    // On one line: Sign out's middle is level with the brand's (a wrapped button sits a whole row lower).
    const middle = async (selector: string) => {
      const box = (await page.locator(selector).first().boundingBox())!;
      return box.y + box.height / 2;
    };
    expect(Math.abs((await middle('.topbar > button')) - (await middle('.topbar .brand')))).toBeLessThan(4);
  });

  it('puts the selected nodes in maintenance with one confirmation, skipping those already in it', { timeout: 120_000 }, async () => {
    const { page, consoleErrors } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, operator, '/nodes');
    for (const nodeId of machines) await page.getByRole('checkbox', { name: `Select ${nodeId}` }).check();
    const bulk = page.getByRole('group', { name: 'Bulk actions' });
    await bulk.getByRole('button', { name: 'Maintenance on…' }).click();
    const dialog = page.getByRole('dialog', { name: /^Maintenance on on \d nodes?$/ });
    const applies = ((await dialog.locator('[data-applies]').textContent()) ?? '').split(', ');
    expect(applies).not.toContain(others()[1]);
    await dialog.getByLabel('Reason').fill('rack power work');
    await dialog.getByRole('button', { name: 'Maintenance on' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Maintenance on:' }).textContent(), { timeout: 30_000 })
      .toMatch(new RegExp(`^Maintenance on: ${applies.length} sent$`));
    for (const nodeId of applies) await expect.poll(async () => (await rig.stack.admin.node(nodeId)).maintenance, { timeout: 15_000 }).toBe(true);
    expect(consoleErrors).toEqual([]);
  });

  it('returns an open page to sign-in within 5 s of its token being revoked, with no click', { timeout: 60_000 }, async () => {
    const token = await rig.stack.createToken('soon-revoked', 'tenant', 'initech');
    const { page, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, token, '/nodes');
    await page.getByText('live', { exact: true }).waitFor({ timeout: 15_000 });
    const revoked = await fetch(`${rig.stack.api}/v1/tokens/soon-revoked`, { method: 'DELETE', headers: { authorization: `Bearer ${rig.stack.adminToken}` } });
    expect(revoked.ok).toBe(true);
    await page.getByLabel('API token').waitFor({ timeout: 5_000 });
    expect(await page.getByRole('status').textContent()).toMatch(/no longer valid/);
    await screenshot('revoked-without-click');
  });
});
