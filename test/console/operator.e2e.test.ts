import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeRowOf } from '../../schemas/metal/nodeRow.ts';
import { unnamedControls } from '../support/accessibility.ts';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

/** Evaluated in the page (the tests compile without the DOM's types). */
const focusedText = "document.activeElement?.textContent ?? ''";

/** The console against `npm start` with a simulated site of two machines, as an operator. */
describe('web console for an operator', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  let operatorToken: string;

  beforeAll(async () => {
    rig = await startConsoleRig(2);
    operatorToken = await rig.stack.createToken('ops', 'operator');
    await rig.stack.admin.waitForNodeState('sim-m001', 'ready', 300_000);
    await rig.stack.admin.waitForNodeState('sim-m002', 'ready', 300_000);
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it('deploys a node from the browser and shows it go ready → deploying → deployed live, then releases it', { timeout: 600_000 }, async () => {
    const overview = await rig.browser.newPage();
    const detail = await rig.browser.newPage();
    await signIn(overview.page, rig.stack.api, operatorToken, '/');
    await signIn(detail.page, rig.stack.api, operatorToken, '/nodes/sim-m001');
    const title = detail.page.getByRole('heading', { level: 1 });
    await expect.poll(() => title.textContent(), { timeout: 10_000 }).toMatch(/sim-m001\s*ready/);
    const deployedTile = overview.page.getByTestId('total-Deployed');
    await expect.poll(() => deployedTile.textContent(), { timeout: 10_000 }).toBe('0');
    // Nothing below reloads a page: the marker survives only if every change arrives live.
    for (const p of [overview.page, detail.page]) await p.evaluate('window.notReloaded = true');

    await detail.page.getByRole('button', { name: 'Deploy' }).click();
    const dialog = detail.page.getByRole('dialog', { name: 'Deploy sim-m001' });
    await dialog.getByLabel('Image URL').fill(rig.image.url);
    await dialog.getByLabel('Image SHA-256').fill(rig.image.sha256);
    await dialog.getByLabel('SSH public keys (one per line)').fill('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIconsole console-test');
    await detail.screenshot('deploy-dialog');
    await dialog.getByRole('button', { name: 'Deploy' }).click();

    await expect.poll(() => title.textContent(), { timeout: 30_000 }).toMatch(/deploying/);
    const steps = detail.page.locator('table.steps');
    await expect
      .poll(() => steps.locator('tr[data-step="image.write"]').getAttribute('data-state'), { timeout: 120_000, interval: 200 })
      .toMatch(/running|succeeded/);
    await detail.screenshot('deploying');
    await expect.poll(() => title.textContent(), { timeout: 180_000, interval: 250 }).toMatch(/deployed/);
    await expect.poll(() => deployedTile.textContent(), { timeout: 15_000 }).toBe('1');
    await detail.screenshot('deployed');
    await overview.screenshot('fleet-overview');
    expect((await rig.stack.admin.node('sim-m001')).state).toBe('deployed');

    await detail.page.getByRole('button', { name: 'Release' }).click();
    await detail.page.getByRole('dialog', { name: 'Release: sim-m001' }).getByRole('button', { name: 'Release' }).click();
    await expect.poll(() => title.textContent(), { timeout: 30_000 }).toMatch(/releasing|wiping/);
    await expect.poll(() => title.textContent(), { timeout: 180_000, interval: 250 }).toMatch(/sim-m001\s*ready/);
    await expect.poll(() => deployedTile.textContent(), { timeout: 15_000 }).toBe('0');
    await detail.screenshot('released');
    // The release's wipe, as its workflow page shows it: succeeded, and attested by the machine's ramdisk key.
    await detail.page.getByRole('link', { name: 'release' }).click();
    const wipe = detail.page.locator('tr[data-step="disk.wipe"]');
    await expect.poll(() => wipe.getAttribute('data-state'), { timeout: 10_000 }).toBe('succeeded');
    expect(await wipe.textContent()).toMatch(/destructive, attested/);
    for (const p of [overview.page, detail.page]) expect(await p.evaluate('window.notReloaded')).toBe(true);
    expect([...overview.consoleErrors, ...detail.consoleErrors]).toEqual([]);
  });

  it('shows the node deploying at an instant in the middle of its deploy on the history timeline', { timeout: 120_000 }, async () => {
    const history = await rig.stack.admin.getJson('/v1/nodes/sim-m001/history');
    const requested = history.timeline.find((e: { state: string }) => e.state === 'deploying');
    const completed = history.timeline.find((e: { state: string }) => e.state === 'deployed');
    expect(requested, 'the first test deploys sim-m001').toBeDefined();
    // The picker takes milliseconds (the browser runs in UTC): an instant strictly inside the deploy.
    expect(Date.parse(completed.time) - Date.parse(requested.time)).toBeGreaterThan(2);
    const middle = new Date((Date.parse(requested.time) + Date.parse(completed.time)) / 2).toISOString().slice(0, 23);

    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, operatorToken, '/nodes/sim-m001');
    const state = page.getByTestId('history-state');
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe('ready');
    await page.getByLabel('Show the node at').fill(middle);
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe('deploying');
    await screenshot('history-mid-deploy');
    expect(await page.locator('.history-snapshot').textContent()).toMatch(/Operation: deploy/);

    // Picking an entry of the timeline shows the node as that batch left it.
    await page
      .getByRole('button', { name: /deployed.*NodeOperationCompleted/ })
      .first()
      .click();
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe('deployed');
    expect(consoleErrors).toEqual([]);
  });

  it('works from the keyboard, names every control and logs no console errors on any page', { timeout: 180_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, operatorToken, '/');

    // Keyboard: the first Tab reaches the skip link, then the navigation; Enter follows a link.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(focusedText)).toBe('Skip to content');
    let reached = '';
    for (let i = 0; i < 10 && reached !== 'Nodes'; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(focusedText);
    }
    expect(reached).toBe('Nodes');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Nodes' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/nodes');

    // A node's actions open from the keyboard, the dialog keeps focus, Escape closes it.
    await page.goto(`${rig.stack.api}/nodes/sim-m002`);
    const deploy = page.getByRole('button', { name: 'Deploy' });
    await deploy.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Deploy sim-m002' });
    await dialog.waitFor();
    expect(await page.evaluate("document.activeElement?.closest('dialog') !== null")).toBe(true);
    expect(await unnamedControls(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    for (const [path, heading] of [
      ['/', 'Fleet overview'],
      ['/nodes', 'Nodes'],
      ['/nodes/sim-m002', 'Node sim-m002'],
      ['/workflows', 'Workflows'],
      ['/approvals', 'Approvals'],
      ['/vps', 'VPS'],
      ['/plugins', 'Plugins and profiles'],
    ] as const) {
      await page.goto(`${rig.stack.api}${path}`);
      await page.getByRole('heading', { level: 1, name: new RegExp(heading) }).waitFor();
      expect(await unnamedControls(page), `unnamed controls on ${path}`).toEqual([]);
      await screenshot(`page${path.replaceAll('/', '-') || '-'}`);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('pages through 10,000 nodes by cursor, keeps only the rows in view in the page, and sorts and filters them', { timeout: 120_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    // The API's own node, multiplied: the fleet a simulated site cannot enroll here, served page by page as the API
    // pages it (500 per page, opaque cursor), so the console's paging and virtual rows meet 10,000 real-shaped rows.
    const template = await rig.stack.admin.node('sim-m002');
    const fleet = Array.from({ length: 10_000 }, (_, i) => ({
      ...template,
      nodeId: `r${String(Math.floor(i / 40)).padStart(3, '0')}-n${String(i % 40).padStart(2, '0')}`,
      siteId: `dc${i % 4}`,
      state: i % 97 === 0 ? 'failed' : i % 3 === 0 ? 'deployed' : 'ready',
    }));
    const requests: URL[] = [];
    await page.route(
      (url) => url.pathname === '/v1/nodes',
      async (route) => {
        const url = new URL(route.request().url());
        requests.push(url);
        const state = url.searchParams.get('state');
        const matching = fleet.filter((n) => !state || n.state === state);
        const start = Number(url.searchParams.get('cursor') ?? 0);
        const limit = Number(url.searchParams.get('limit'));
        const end = start + limit;
        const items = matching.slice(start, end);
        const rows = url.searchParams.get('view') === 'row' ? items.map(nodeRowOf) : items;
        await route.fulfill({ json: { items: rows, nextCursor: end < matching.length ? String(end) : null } });
      },
    );
    await signIn(page, rig.stack.api, operatorToken, '/nodes');
    await page.getByText('10000 nodes', { exact: true }).waitFor({ timeout: 30_000 });
    // The list reads rows (no inventories), 500 at a time.
    expect(requests.map((u) => [u.searchParams.get('view'), u.searchParams.get('limit'), u.searchParams.get('cursor')])).toEqual(
      Array.from({ length: 20 }, (_, i) => ['row', '500', i === 0 ? null : String(i * 500)]),
    );
    expect(await page.locator('[role=table]').getAttribute('aria-rowcount')).toBe('10001');
    expect(await page.locator('[data-node]').count()).toBeLessThan(60);
    expect(await page.locator('[data-node]').first().getAttribute('data-node')).toBe('r000-n00');

    // Sorting by state puts the deployed nodes first; the last row is reachable by scrolling.
    await page.getByRole('button', { name: 'State', exact: true }).click();
    expect(await page.locator('[data-node]').first().textContent()).toContain('deployed');
    await page.getByRole('button', { name: 'Node', exact: true }).click();
    await page.getByRole('button', { name: 'Node', exact: true }).click();
    expect(await page.locator('[data-node]').first().getAttribute('data-node')).toBe('r249-n39');
    await page.evaluate("document.querySelector('.node-scroller').scrollTop = 1e9");
    await expect.poll(() => page.locator('[data-node]').last().getAttribute('data-node')).toBe('r000-n00');
    await screenshot('nodes-10000');

    // A filter that narrows the list read in full is applied to it, without reading 10,000 nodes again; one that
    // widens it goes to the API, and the list is what it answers.
    const readsBefore = requests.length;
    await page.getByLabel('State').selectOption('failed');
    await page.getByText(`${fleet.filter((n) => n.state === 'failed').length} nodes`, { exact: true }).waitFor();
    expect(new URL(page.url()).searchParams.get('state')).toBe('failed');
    expect(requests.length).toBe(readsBefore);
    await page.getByLabel('State').selectOption('');
    await page.getByText('10000 nodes', { exact: true }).waitFor({ timeout: 30_000 });
    expect(requests.slice(readsBefore).map((u) => [u.searchParams.get('state'), u.searchParams.get('cursor')])).toEqual(
      Array.from({ length: 20 }, (_, i) => [null, i === 0 ? null : String(i * 500)]),
    );
    await page.getByLabel('State').selectOption('failed');
    await page.getByLabel('Search').fill('r000');
    await expect.poll(() => page.locator('[data-node]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-node')))).toEqual(['r000-n00']);
    expect(requests.length).toBe(readsBefore + 20);
    expect(consoleErrors).toEqual([]);
  });
});
