import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unnamedControls } from '../support/accessibility.ts';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

// Evaluated in the page as strings: the tests compile without the DOM's types.
/** A column of a chart's table, summed over its rows (the hours with anything in them). */
const columnSum = (chart: string, label: string) => `(() => {
  const table = document.querySelector('[data-chart="${chart}"] details table');
  const column = [...table.tHead.rows[0].cells].findIndex((c) => c.textContent === ${JSON.stringify(label)});
  return [...table.tBodies[0].rows].reduce((sum, row) => sum + Number(row.cells[column].textContent), 0);
})()`;

/** Pixels the chart's canvas drew (not transparent): an empty canvas has none. */
const drawnPixels = (chart: string) => `(() => {
  const canvas = document.querySelector('[data-chart="${chart}"] canvas');
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let drawn = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i] > 0) drawn++;
  return drawn;
})()`;

/** Whether the chart's canvas fits the box it is drawn in. */
const fitsItsBox = (chart: string) => `(() => {
  const holder = document.querySelector('[data-chart="${chart}"] .trend-chart');
  return holder.querySelector('canvas').getBoundingClientRect().width <= holder.clientWidth;
})()`;

/** `npm start` with a simulated site of two machines: two real deploys and a real release, then the Trends page as a viewer. */
describe('web console trends', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  let viewer: string;

  beforeAll(async () => {
    rig = await startConsoleRig(2);
    viewer = await rig.stack.createToken('watcher', 'viewer');
    for (const nodeId of ['sim-m001', 'sim-m002']) await rig.stack.admin.waitForNodeState(nodeId, 'ready', 300_000);
    for (const nodeId of ['sim-m001', 'sim-m002']) {
      const deploy = await rig.stack.admin.command('metal.deploy', { nodeId, imageUrl: rig.image.url, imageSha256: rig.image.sha256, role: 'host' });
      expect(deploy.status).toBe(201);
    }
    for (const nodeId of ['sim-m001', 'sim-m002']) await rig.stack.admin.waitForNodeState(nodeId, 'deployed', 300_000);
    expect((await rig.stack.admin.command('metal.undeploy', { nodeId: 'sim-m001' })).status).toBe(201);
    await rig.stack.admin.waitForNodeState('sim-m001', 'ready', 300_000);
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it('draws the deploys, the release, the steps and their throughput the stack ran, with tables of the same numbers', { timeout: 300_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await signIn(page, rig.stack.api, viewer, '/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trends' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trends' }).waitFor();
    await page.getByLabel('Site').selectOption('sim');

    const operations = page.getByRole('figure', { name: 'Deploys and releases per hour' });
    // The chart is an image named by what it shows: the numbers are the stack's, not a placeholder's.
    const chart = operations.getByRole('img');
    await expect
      .poll(() => chart.getAttribute('aria-label'), { timeout: 30_000 })
      .toBe(
        'Deploys and releases per hour: deploys started 2, deploys completed 2, deploys failed 0, releases started 1, releases completed 1, releases failed 0',
      );
    expect(await page.evaluate<number>(drawnPixels('operations'))).toBeGreaterThan(500);
    await operations.getByText('Table of deploys and releases per hour').click();
    const sums = Object.fromEntries(
      await Promise.all(
        ['Deploys started', 'Deploys completed', 'Releases completed', 'Releases failed'].map(async (l) => [
          l,
          await page.evaluate<number>(columnSum('operations', l)),
        ]),
      ),
    );
    expect(sums).toEqual({ 'Deploys started': 2, 'Deploys completed': 2, 'Releases completed': 1, 'Releases failed': 0 });

    // The image was written twice and the disks wiped once: counts, percentiles and throughput from the signed results.
    const steps = page.getByRole('table', { name: 'Steps over the range' });
    const image = steps.locator('tr[data-step="image.write"] td');
    expect(await image.allTextContents()).toEqual(['2', expect.stringMatching(/\d/), expect.stringMatching(/\d/), expect.stringMatching(/MB\/s$/)]);
    expect(await steps.locator('tr[data-step="disk.wipe"] td').first().textContent()).toBe('1');
    const throughput = page.getByRole('figure', { name: 'Wipe and image-write throughput' });
    expect(await throughput.getByRole('img').getAttribute('aria-label')).toMatch(
      /disk\.wipe [\d.]+ MB\/s.*image\.write [\d.]+ MB\/s|image\.write [\d.]+ MB\/s.*disk\.wipe [\d.]+ MB\/s/,
    );
    const capacity = page.getByRole('figure', { name: 'Waiting for capacity' });
    await capacity.getByText('Table of waiting for capacity').click();
    expect(await page.evaluate<number>(columnSum('capacity', 'Asked for'))).toBe(3);

    expect(await unnamedControls(page)).toEqual([]);
    for (const [width, height] of [
      [390, 844],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width, height });
      // The charts follow their box's width; nothing makes the page wider than the screen.
      await expect.poll(() => page.evaluate<boolean>(fitsItsBox('operations'))).toBe(true);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(width);
      await screenshot(`trends-${width}`);
    }
    // One more section in the navigation still leaves the top bar on one line at 1280 px, even while reconnecting.
    await page.locator('.live').evaluate((status) => (status.textContent = 'reconnecting…'));
    const middle = async (selector: string) => {
      const box = (await page.locator(selector).first().boundingBox())!;
      return box.y + box.height / 2;
    };
    expect(Math.abs((await middle('.topbar > button')) - (await middle('.topbar .brand')))).toBeLessThan(4);
    expect(consoleErrors).toEqual([]);
  });
});
