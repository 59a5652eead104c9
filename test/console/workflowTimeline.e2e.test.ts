import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';
import { startImageServer } from '../support/imageServer.ts';

/** Evaluated in the page (the tests compile without the DOM's types): a step's bar, as placed on its track. */
const barOf = (step: string) => `(() => {
  const bar = document.querySelector('.step-timeline li[data-step="${step}"] .step-bar');
  return bar ? { left: parseFloat(bar.style.left), width: parseFloat(bar.style.width), open: bar.classList.contains('open') } : null;
})()`;
/** Every started step's bar in order: [left, width] in percent of the workflow's axis. */
const allBars = `[...document.querySelectorAll('.step-timeline > ol > li')].map((li) => {
  const bar = li.querySelector('.step-bar');
  return bar ? [parseFloat(bar.style.left), parseFloat(bar.style.width)] : null;
})`;

interface Bar {
  left: number;
  width: number;
  open: boolean;
}

/**
 * The step timeline of issue 37 against `npm start` with one simulated machine: a real deploy (its image streamed
 * slowly, so image.write's bar is seen growing on the live node page) and a real release, read as a viewer.
 */
describe('web console: a workflow’s step timeline and step outputs', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  let viewer: string;
  const nodeId = 'sim-m001';

  beforeAll(async () => {
    rig = await startConsoleRig(1);
    viewer = await rig.stack.createToken('watcher', 'viewer');
    await rig.stack.admin.waitForNodeState(nodeId, 'ready', 300_000);
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it('draws a bar per step from its start and end, growing while it runs, with the image digest and the disks wiped', { timeout: 600_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, rig.stack.api, viewer, `/nodes/${nodeId}`);

    // About 12 s of image.write: long enough to watch its bar grow on the node page.
    await using slowImage = await startImageServer(undefined, { bytesPerSecond: 256 * 1024, partitioned: true });
    const deploy = await rig.stack.admin.command('metal.deploy', { nodeId, imageUrl: slowImage.url, imageSha256: slowImage.sha256, role: 'host' });
    expect(deploy.status).toBe(201);
    const timeline = page.getByRole('figure', { name: /^Step timeline/ });
    await expect.poll(() => page.evaluate<Bar | null>(barOf('image.write')), { timeout: 240_000, interval: 250 }).toMatchObject({ open: true });
    const first = (await page.evaluate<Bar | null>(barOf('image.write')))!;
    expect(await timeline.locator('li[data-step="image.write"] .step-duration').textContent()).toMatch(/so far$/);
    // The steps before it have ended: closed bars that end no later than image.write starts.
    const before = (await page.evaluate<([number, number] | null)[]>(allBars)).slice(0, 3);
    for (const bar of before) expect(bar![0] + bar![1]).toBeLessThanOrEqual(first.left + 0.7);
    await expect
      .poll(async () => (await page.evaluate<Bar | null>(barOf('image.write')))!.width, { timeout: 20_000, interval: 500 })
      .toBeGreaterThan(first.width);
    await screenshot('workflow-timeline-running');

    await rig.stack.admin.waitForNodeState(nodeId, 'deployed', 300_000);
    const deployId = (deploy.body.events[0].data as { workflowId: string }).workflowId;
    await page.goto(`${rig.stack.api}/workflows/${deployId}`);
    const image = page.getByRole('list', { name: 'Output of image.write' });
    await expect.poll(() => image.textContent(), { timeout: 15_000 }).toContain(`Image sha256:${slowImage.sha256}`);
    expect(await image.textContent()).toMatch(/3\.15 MB written, read back and verified/);
    expect(
      await page
        .getByRole('figure', { name: /^Step timeline/ })
        .locator('figcaption')
        .textContent(),
    ).toMatch(/ in all$/);
    // Ended: no bar is open, each starts where or after the one before it started, and all fit the axis.
    const bars = await page.evaluate<([number, number] | null)[]>(allBars);
    expect(bars.every((b) => b !== null)).toBe(true);
    for (let i = 1; i < bars.length; i++) expect(bars[i]![0]).toBeGreaterThanOrEqual(bars[i - 1]![0]);
    for (const [left, width] of bars as [number, number][]) expect(left + width).toBeLessThanOrEqual(100.01);
    expect(await page.locator('.step-bar.open').count()).toBe(0);
    await screenshot('workflow-timeline');

    const release = await rig.stack.admin.command('metal.undeploy', { nodeId });
    expect(release.status).toBe(201);
    await rig.stack.admin.waitForNodeState(nodeId, 'ready', 300_000);
    await page.goto(`${rig.stack.api}/workflows/${(release.body.events[0].data as { workflowId: string }).workflowId}`);
    const wipe = page.getByRole('list', { name: 'Output of disk.wipe' });
    await expect.poll(() => wipe.locator('li[data-fact="disk"]').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await wipe.locator('li[data-fact="disk"]').first().textContent()).toMatch(/^Wiped \/\S+.*: zeroed, [\d.]+ [kMG]?B read back$/);
    expect(await wipe.locator('li[data-fact="verified"]').textContent()).toMatch(/^\d+ disk\(s\), [\d.]+ [kMG]?B erased, attested by the ramdisk$/);
    await screenshot('workflow-timeline-release');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(390);
    await screenshot('workflow-timeline-release-390');
    expect(consoleErrors).toEqual([]);
  });
});
