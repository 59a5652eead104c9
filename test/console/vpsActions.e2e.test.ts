import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk9c2W0v0t1aD3z5kq9O2p8Q1m4Y6r7T8u9V0w1X2y3 tenant@laptop';

/**
 * VPS instance verbs and the quota legend (issue 37) against `npm start`: tenant initech, with a quota and a pool of the
 * simulated site, has two instances; it stops, starts, tries a remediation the API refuses, and deletes one in the
 * console, each behind a confirmation.
 */
describe('web console: VPS instance actions and the quota legend', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;
  let tenant: string;
  let operator: string;

  beforeAll(async () => {
    rig = await startConsoleRig(1);
    const run = async (name: string, payload: unknown) => {
      const res = await rig.stack.admin.command(name, payload);
      if (res.status !== 201) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    await run('vps.createPool', { poolId: 'metal-a', class: 'metal', agent: 'bcd', siteId: 'sim', policy: { provisioningCidrs: ['10.0.0.0/24'] } });
    await run('vps.createFlavor', { flavorId: 'small', vcpus: 1, memoryMib: 1_024, diskGib: 10 });
    await run('vps.mapFlavor', { flavorId: 'small', poolId: 'metal-a', offerId: 'hw-small' });
    await run('vps.createTenant', { tenantId: 'initech', name: 'Initech' });
    await run('vps.setQuota', { tenantId: 'initech', instances: 3, vcpus: 4, memoryMib: 8_192, diskGib: 100 });
    await run('vps.offerPool', { poolId: 'metal-a', tenantId: 'initech' });
    const instance = { tenantId: 'initech', poolId: 'metal-a', flavorId: 'small', image: 'ubuntu-24.04', sshKeys: [SSH_KEY] };
    await run('vps.createInstance', { ...instance, instanceId: 'web-1' });
    await run('vps.createInstance', { ...instance, instanceId: 'web-2' });
    tenant = await rig.stack.createToken('initech', 'tenant', 'initech');
    operator = await rig.stack.createToken('ops', 'operator');
  }, 900_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it('stops, starts, refuses a remediation with its code, and deletes an instance, behind confirmations', { timeout: 300_000 }, async () => {
    const { page, consoleErrors, screenshot } = await rig.browser.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, rig.stack.api, tenant, '/vps');
    const legend = page.getByRole('list', { name: 'Quota bar legend' });
    await legend.waitFor({ timeout: 15_000 });
    expect(await legend.getByRole('listitem').allTextContents()).toEqual([
      expect.stringMatching(/^\s*Used: /),
      expect.stringMatching(/^\s*Reserved: /),
      expect.stringMatching(/^\s*Free/),
      'Numbers: used + reserved / limit',
    ]);
    // The bars the legend explains: two small instances reserved of the tenant's quota.
    expect(await page.getByRole('img', { name: /^vCPUs:/ }).getAttribute('aria-label')).toBe('vCPUs: 0 used, 2 reserved of 4');

    const row = page.locator('tr[data-instance="web-1"]');
    const desired = row.locator('td:nth-child(5)');
    const actions = page.getByRole('group', { name: 'Actions on web-1' });
    await expect.poll(() => actions.getByRole('button').allTextContents(), { timeout: 15_000 }).toEqual(['Stop', 'Delete', 'Remediate']);
    /** Opens the action's dialog, lets `before` look at it (or fill it), then confirms. */
    const confirm = async (label: string, before?: (dialog: Locator) => Promise<void>) => {
      await actions.getByRole('button', { name: label }).click();
      const dialog = page.getByRole('dialog', { name: `${label} instance web-1` });
      await before?.(dialog);
      await dialog.getByRole('button', { name: label }).click();
      return dialog;
    };
    await (await confirm('Stop')).waitFor({ state: 'hidden', timeout: 30_000 });
    await expect.poll(() => desired.textContent(), { timeout: 15_000 }).toBe('stopped');
    expect(await actions.getByRole('button').allTextContents()).toEqual(['Start', 'Delete', 'Remediate']);
    await (await confirm('Start')).waitFor({ state: 'hidden', timeout: 30_000 });
    await expect.poll(() => desired.textContent(), { timeout: 15_000 }).toBe('running');

    // No provider serves a metal pool's instances here, so none is ever created: a remediation has nothing to act on
    // yet, and the API says so with its code, in the dialog.
    const refused = await confirm('Remediate', (dialog) => dialog.getByLabel('Profile').fill('bmc-check'));
    await expect.poll(() => refused.getByRole('alert').textContent(), { timeout: 30_000 }).toMatch(/^INSTANCE_BUSY instance web-1 is not created yet/);
    await screenshot('vps-remediate-refused');
    await refused.getByRole('button', { name: 'Cancel' }).click();
    await refused.waitFor({ state: 'hidden' });
    // Focus returns to the button the dialog was opened from.
    expect(await page.evaluate("document.activeElement?.textContent ?? ''")).toBe('Remediate');

    const deleting = await confirm('Delete', async (dialog) => expect(await dialog.textContent()).toContain('for good'));
    await deleting.waitFor({ state: 'hidden', timeout: 30_000 });
    await expect.poll(() => desired.textContent(), { timeout: 15_000 }).toBe('deleted');
    expect(await actions.count()).toBe(0);
    await screenshot('vps-actions');
    expect(consoleErrors).toEqual([expect.stringMatching(/status of 4\d\d .*\/v1\/commands\/vps\.remediateInstance\)$/)]);
    await page.close();

    // An operator acts on the tenant's other instance, and sees the same legend.
    const ops = await rig.browser.newPage();
    await ops.page.setViewportSize({ width: 1280, height: 800 });
    await signIn(ops.page, rig.stack.api, operator, '/vps');
    const other = ops.page.getByRole('group', { name: 'Actions on web-2' });
    await other.getByRole('button', { name: 'Stop' }).click();
    await ops.page.getByRole('dialog', { name: 'Stop instance web-2' }).getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => ops.page.locator('tr[data-instance="web-2"] td:nth-child(5)').textContent(), { timeout: 15_000 }).toBe('stopped');
    await ops.page.getByRole('list', { name: 'Quota bar legend' }).waitFor();
    await ops.screenshot('vps-operator');
    await ops.page.setViewportSize({ width: 390, height: 844 });
    expect(await ops.page.evaluate('document.documentElement.scrollWidth')).toBe(390);
    await ops.screenshot('vps-operator-390');
    expect(ops.consoleErrors).toEqual([]);
  });
});
