import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

/** Evaluated in the page (the tests compile without the DOM's types). */
const box = "document.querySelector('[role=log]')";
const scrollTop = `${box}.scrollTop`;
const atEnd = `(${box}.scrollHeight - ${box}.scrollTop - ${box}.clientHeight) <= 8`;
const lineCount = `${box}.querySelectorAll('.log-line').length`;

/**
 * The node page's Logs panel against `npm start` (broker auth on: the simulated site's agents publish with their own
 * credentials) with one simulated machine, as a viewer: what the agents printed, and new lines as they come.
 */
describe('web console: a node’s logs', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  let viewerToken: string;

  beforeAll(async () => {
    rig = await startConsoleRig(1);
    viewerToken = await rig.stack.createToken('viewer', 'viewer');
    await rig.stack.admin.waitForNodeState('sim-m001', 'ready', 300_000);
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it('shows the agents’ lines live, keeps to the newest until the reader scrolls up, and follows again on request', { timeout: 600_000 }, async () => {
    const { page, screenshot } = await rig.browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, rig.stack.api, viewerToken, '/nodes/sim-m001');
    const log = page.getByRole('log', { name: /Logs/ });
    // The site agent's BMC work that brought the node to ready, each command with its exit.
    await expect.poll(() => log.textContent(), { timeout: 30_000 }).toMatch(/site-agent.*finished ok in/);
    const before = Number(await page.evaluate(lineCount));
    // A short box, as a long log would fill a tall one: what follows scrolls.
    await page.evaluate(`${box}.style.maxHeight = '90px'`);

    // An in-band inspection now (the machine boots the ramdisk): its lines arrive without a reload, the ramdisk's among
    // them (published with its own node credentials), and the panel keeps to the newest.
    await page.evaluate('window.notReloaded = true');
    expect((await rig.stack.admin.command('metal.inspect', { nodeId: 'sim-m001', inBand: true })).status).toBe(201);
    await expect.poll(async () => Number(await page.evaluate(lineCount)), { timeout: 120_000 }).toBeGreaterThan(before + 2);
    await expect.poll(() => log.textContent(), { timeout: 180_000 }).toMatch(/ramdisk.*(inventory\.report|hardware\.probe) finished ok in/);
    expect(await page.evaluate(`${box}.scrollHeight > ${box}.clientHeight`)).toBe(true);
    await expect.poll(() => page.evaluate(atEnd), { timeout: 5_000 }).toBe(true);
    await screenshot('node-logs-following');

    // Scrolled up, new lines leave the view where the reader put it.
    await page.evaluate(`${box}.scrollTop = 0`);
    await page.getByRole('button', { name: 'Follow new lines' }).waitFor();
    const seen = Number(await page.evaluate(lineCount));
    // More comes: the inspection's remaining work, or the BMC monitor's power probe of the resting node (every minute).
    await expect.poll(async () => Number(await page.evaluate(lineCount)), { timeout: 180_000 }).toBeGreaterThan(seen);
    expect(await page.evaluate(scrollTop)).toBe(0);
    await page.getByRole('button', { name: 'Follow new lines' }).click();
    await expect.poll(() => page.evaluate(atEnd), { timeout: 5_000 }).toBe(true);
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    await screenshot('node-logs');
  });
});
