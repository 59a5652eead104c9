import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

/**
 * The node page's power, retire and agent liveness (issue 37) against `npm start` with one simulated machine, as an
 * operator: power buttons run the built-in power profiles through `metal.remediate` and the BMC's answers come back as
 * the node's power; a refusal shows its problem code; a rescue's ramdisk is seen alive; retire takes the node out.
 */
describe('web console: node power, retire and agent liveness', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  let operator: string;
  const nodeId = 'sim-m001';

  beforeAll(async () => {
    rig = await startConsoleRig(1);
    operator = await rig.stack.createToken('ops', 'operator');
    await rig.stack.admin.waitForNodeState(nodeId, 'ready', 300_000);
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it('sets and reads the power through the BMC, shows refusals with their code, an agent alive, and retires the node', { timeout: 600_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, rig.stack.api, operator, `/nodes/${nodeId}`);
    const power = page.locator('[data-power]');
    const buttons = page.getByRole('group', { name: 'Power actions' });
    const heading = page.getByRole('heading', { level: 1 });
    // Enrolment inspected it over the BMC's inventory only: no step has touched its power yet, and no agent ran.
    await expect.poll(() => power.getAttribute('data-power'), { timeout: 15_000 }).toBe('unknown');
    expect(await page.locator('[data-liveness]').getAttribute('data-liveness')).toBe('never');
    expect(await buttons.getByRole('button').allTextContents()).toEqual(['Read power', 'Power on', 'Power off', 'Power cycle']);

    const press = async (label: string) => {
      await buttons.getByRole('button', { name: label }).click();
      const dialog = page.getByRole('dialog', { name: `${label}: ${nodeId}` });
      await dialog.getByRole('button', { name: label }).click();
      await dialog.waitFor({ state: 'hidden', timeout: 30_000 });
    };
    // Off, then a read that changes nothing, then on: each the BMC's own answer, recorded by the workflow's step.
    await press('Power off');
    await expect.poll(() => power.getAttribute('data-power'), { timeout: 180_000, interval: 250 }).toBe('Off');
    expect(await power.textContent()).toMatch(/power\.set of wf-/);
    await expect.poll(() => heading.textContent(), { timeout: 60_000 }).toMatch(/ready$/);
    await press('Read power');
    await expect.poll(() => power.textContent(), { timeout: 180_000, interval: 250 }).toMatch(/^Off, .*\(power\.get of wf-/);
    await buttons.waitFor({ timeout: 60_000 });
    await press('Power on');
    await expect.poll(() => power.getAttribute('data-power'), { timeout: 180_000, interval: 250 }).toBe('On');
    await screenshot('node-power');
    // At a phone's width the power section and its buttons wrap inside the page.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(390);
    await screenshot('node-power-390');
    await page.setViewportSize({ width: 1280, height: 800 });

    // A refusal: the node starts a rescue while the dialog is open, and the API's code shows in the dialog.
    await buttons.waitFor({ timeout: 60_000 });
    await buttons.getByRole('button', { name: 'Power cycle' }).click();
    const cycle = page.getByRole('dialog', { name: `Power cycle: ${nodeId}` });
    expect((await rig.stack.admin.command('metal.rescue', { nodeId })).status).toBe(201);
    await expect.poll(() => heading.textContent(), { timeout: 30_000 }).toMatch(/rescuing|rescue$/);
    await cycle.getByRole('button', { name: 'Power cycle' }).click();
    await expect
      .poll(() => cycle.getByRole('alert').textContent(), { timeout: 30_000 })
      .toMatch(/^ILLEGAL_TRANSITION metal\.remediate is not allowed in state/);
    await screenshot('node-power-refused');
    await cycle.getByRole('button', { name: 'Cancel' }).click();

    // In rescue the ramdisk runs and heartbeats: its agent is alive, said in words.
    await expect.poll(() => heading.textContent(), { timeout: 180_000 }).toMatch(/rescue$/);
    await expect.poll(() => page.locator('[data-liveness]').getAttribute('data-liveness'), { timeout: 60_000, interval: 250 }).toBe('alive');
    expect(await page.locator('[data-liveness]').textContent()).toMatch(/^Alive: ramdisk agent \S+ heard \d+ s ago$/);
    await screenshot('node-liveness');
    await page.getByRole('group', { name: 'Node actions' }).getByRole('button', { name: 'Leave rescue' }).click();
    await page
      .getByRole('dialog', { name: `Leave rescue: ${nodeId}` })
      .getByRole('button', { name: 'Leave rescue' })
      .click();
    await expect.poll(() => heading.textContent(), { timeout: 60_000 }).toMatch(/ready$/);

    // Retire: wiped and powered off for good; the page says so, and offers nothing more.
    await page.getByRole('group', { name: 'Node actions' }).getByRole('button', { name: 'Retire' }).click();
    const retire = page.getByRole('dialog', { name: `Retire: ${nodeId}` });
    expect(await retire.textContent()).toContain('leaves the fleet for good');
    await retire.getByRole('button', { name: 'Retire' }).click();
    await expect.poll(() => heading.textContent(), { timeout: 240_000, interval: 250 }).toMatch(/retired$/);
    await expect.poll(() => power.getAttribute('data-power'), { timeout: 30_000 }).toBe('Off');
    expect(await buttons.count()).toBe(0);
    expect(await page.locator('[data-liveness]').getAttribute('data-liveness')).not.toBe('alive');
    await screenshot('node-retired');
    // The one refusal, as the browser logs any 4xx; nothing else went wrong.
    expect(consoleErrors).toEqual([expect.stringMatching(/status of 409 .*\/v1\/commands\/metal\.remediate\)$/)]);
  });
});
