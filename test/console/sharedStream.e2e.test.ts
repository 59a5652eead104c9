import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

/** The API's own count of the console's event streams: open now, and opened since it started (`/metrics`). */
async function eventStreams(api: string): Promise<{ open: number; opened: number }> {
  const text = await (await fetch(`${api}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name}\\{stream="event stream"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { open: value('bc_api_live_streams'), opened: value('bc_api_live_streams_opened_total') };
}

/**
 * One browser (one Chromium profile) with several console tabs: the tabs of one token share one event stream through
 * the console's shared worker, a tab of another token has its own, and the stream's end (revocation) reaches every tab.
 */
describe('web console: one live event stream per browser', () => {
  let rig: Awaited<ReturnType<typeof startConsoleRig>>;

  beforeAll(async () => {
    rig = await startConsoleRig(1);
    await rig.stack.admin.waitForNodeState('sim-m001', 'ready', 300_000);
  }, 600_000);
  afterAll(() => rig?.[Symbol.asyncDispose]());

  it(
    'opens one stream for 3 tabs of a token, updates all 3 live, gives another token its own, and sends all 3 to sign-in at revocation',
    { timeout: 180_000 },
    async () => {
      const { api } = rig.stack;
      const token = await rig.stack.createToken('three-tabs', 'operator');
      const before = await eventStreams(api);
      expect(before.open).toBe(0);
      const tabs = [];
      for (let i = 0; i < 3; i++) {
        const tab = await rig.browser.newPage();
        await signIn(tab.page, api, token, '/nodes/sim-m001');
        tabs.push(tab);
      }
      for (const { page } of tabs) await expect.poll(() => page.locator('.live').textContent(), { timeout: 15_000 }).toBe('live');
      expect(await eventStreams(api)).toEqual({ open: 1, opened: before.opened + 1 });

      // A change made elsewhere reaches every tab through the one stream.
      const actions = tabs.map(({ page }) => page.getByRole('group', { name: 'Node actions' }));
      for (const group of actions) await expect.poll(() => group.getByRole('button').allTextContents(), { timeout: 15_000 }).toContain('Maintenance on');
      expect((await rig.stack.admin.command('metal.setMaintenance', { nodeId: 'sim-m001', on: true, reason: 'fan' })).status).toBe(201);
      for (const group of actions) await expect.poll(() => group.getByRole('button').allTextContents(), { timeout: 10_000 }).toContain('Maintenance off');

      // A tab signed in with another token never shares it: a stream of its own, closed with its last tab.
      const viewer = await rig.stack.createToken('fourth-tab', 'viewer');
      const fourth = await rig.browser.newPage();
      await signIn(fourth.page, api, viewer, '/');
      await expect.poll(() => eventStreams(api), { timeout: 10_000 }).toEqual({ open: 2, opened: before.opened + 2 });
      await fourth.page.close();
      await expect.poll(() => eventStreams(api), { timeout: 10_000 }).toEqual({ open: 1, opened: before.opened + 2 });

      // A tab that joins late reads its page as of where the shared stream stands, then follows it live.
      const late = await rig.browser.newPage();
      await signIn(late.page, api, token, '/nodes/sim-m001');
      const lateActions = late.page.getByRole('group', { name: 'Node actions' });
      await expect.poll(() => lateActions.getByRole('button').allTextContents(), { timeout: 15_000 }).toContain('Maintenance off');
      expect((await rig.stack.admin.command('metal.setMaintenance', { nodeId: 'sim-m001', on: false })).status).toBe(201);
      for (const group of [...actions, lateActions])
        await expect.poll(() => group.getByRole('button').allTextContents(), { timeout: 10_000 }).toContain('Maintenance on');
      expect(await eventStreams(api)).toEqual({ open: 1, opened: before.opened + 2 });
      tabs.push(late);

      // Revoked: the one stream ends and every tab of the token is back at sign-in within 5 s, with no click.
      const revoked = await fetch(`${api}/v1/tokens/three-tabs`, { method: 'DELETE', headers: { authorization: `Bearer ${rig.stack.adminToken}` } });
      expect(revoked.ok).toBe(true);
      const at = Date.now();
      await Promise.all(tabs.map(({ page }) => page.getByLabel('API token').waitFor({ timeout: 5_000 })));
      expect(Date.now() - at).toBeLessThan(5_000);
      for (const { page } of tabs) expect(await page.getByRole('status').textContent()).toMatch(/no longer valid/);
      await expect.poll(() => eventStreams(api), { timeout: 5_000 }).toEqual({ open: 0, opened: before.opened + 2 });
      for (const { consoleErrors } of tabs) expect(consoleErrors.filter((e) => !/401/.test(e))).toEqual([]);
    },
  );
});
