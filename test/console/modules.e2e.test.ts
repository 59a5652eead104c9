import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Inboxes } from '../../schemas/subjects.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { readStackRecord } from '../../services/platform/stackRecord.ts';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import { bundleOf, newPublisher } from '../fleet/bundleFixture.ts';
import { unnamedControls } from '../support/accessibility.ts';
import { launchChromium } from '../support/chromium.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { signIn, startConsoleStack } from '../support/consoleStack.ts';

const hosts = ['web-1', 'web-2', 'web-3'];
const rolloutId = 'nginx-1';

/**
 * Issues 35 and 37: the console's Modules area against `npm start`. Publisher acme signs nginx 1.24.0 and 1.26.1,
 * template `web` runs nginx on three hosts pinned at 1.24.0, and a rollout to 1.26.1 runs in three waves (canary, then
 * one host each). The rollout controller's seam (`fleet.startWave`, `fleet.recordHostOutcome`) is driven over NATS as a
 * control-plane process sends it; the rollout page shows each report as it lands, without a reload.
 */
describe('web console: modules, versions, assignments and a rollout with its waves live', () => {
  let stack: Awaited<ReturnType<typeof startConsoleStack>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let controller: NatsConnection;
  let operator: string;
  let viewer: string;
  const acme = newPublisher('acme');

  const admin = async (method: string, path: string, body: unknown, contentType = 'application/json') => {
    const res = await fetch(`${stack.api}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': contentType },
      body: body instanceof Uint8Array ? Buffer.from(body) : JSON.stringify(body),
    });
    const answer = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  /** What the rollout controller sends, signed with a control-plane credential of the stack's own trust chain. */
  const engine = (name: string, payload: Record<string, unknown>) => sendCommand(controller, name, { rolloutId, ...payload });

  beforeAll(async () => {
    const [startedStack, startedBrowser] = await Promise.allSettled([startConsoleStack(0), launchChromium()] as const);
    if (startedStack.status === 'fulfilled') stack = startedStack.value;
    if (startedBrowser.status === 'fulfilled') browser = startedBrowser.value;
    // afterAll disposes whichever started.
    for (const r of [startedStack, startedBrowser]) if (r.status === 'rejected') throw r.reason;
    const record = readStackRecord(stack.dataDir)!;
    const { creds } = await issueServiceCredentials(await loadOrCreateBrokerMaterial(join(stack.dataDir, 'broker')), 'console-test-controller');
    controller = await connectNats(record.natsUrl, 'console-test-controller', { credentials: { creds, inboxPrefix: Inboxes.controlPlane } });

    await admin('POST', '/v1/commands/site.create', { siteId: 'dc1', name: 'DC 1' });
    for (const nodeId of hosts) await admin('POST', '/v1/commands/metal.enroll', enrollPayload(nodeId));
    await admin('POST', '/v1/commands/pki.registerPublisher', { publisherId: 'acme', publicKey: acme.publicKey });
    for (const version of ['1.24.0', '1.26.1']) {
      const bundle = bundleOf(acme, { name: 'nginx', version, provides: ['http'], requires: [], exclusive: [] });
      const { sha256 } = await admin('PUT', '/v1/modules/bundles', bundle, 'application/octet-stream');
      await admin('POST', '/v1/modules/nginx/versions', { version, bundleSha256: sha256 });
    }
    await admin('POST', '/v1/commands/fleet.defineTemplate', { templateId: 'web', requires: [{ module: 'nginx', range: '^1.24' }] });
    let seq = 0;
    for (const nodeId of hosts) {
      const assigned = await admin('POST', '/v1/commands/fleet.assignTemplate', { nodeId, template: 'web', pins: [{ module: 'nginx', version: '1.24.0' }] });
      seq = assigned.seq as number;
    }
    // Waves of one host each; an hour to report, so no deadline passes while the test runs.
    const plan = {
      module: 'nginx',
      fromVersion: '1.24.0',
      toVersion: '1.26.1',
      canarySize: 1,
      wavePercent: 50,
      maxConsecutiveFailures: 2,
      waveTimeoutMs: 3_600_000,
    };
    const rollout = await admin('POST', `/v1/rollouts?minSeq=${seq}`, plan);
    expect((rollout.events as { data: { rolloutId: string } }[])[0]!.data.rolloutId).toBe(rolloutId);
    operator = await stack.createToken('ops', 'operator');
    viewer = await stack.createToken('watcher', 'viewer');
  }, 600_000);
  afterAll(async () => {
    await controller?.close();
    await browser?.[Symbol.asyncDispose]();
    await stack?.[Symbol.asyncDispose]();
  });

  it(
    'lists modules, the rollout, the template, the publisher and each host’s pinned plan; a module shows who signed each version with which key',
    { timeout: 180_000 },
    async () => {
      const { page, consoleErrors, screenshot } = await browser.newPage();
      await signIn(page, stack.api, viewer, '/');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Modules' }).click();
      const modules = page.getByRole('table', { name: 'Modules' });
      await expect
        .poll(() => modules.locator('tr[data-module="nginx"] td').allTextContents(), { timeout: 15_000 })
        .toEqual(['nginx', '2', '1.26.1', expect.any(String)]);
      const rollout = page.getByRole('table', { name: 'Rollouts, newest first' }).locator(`tr[data-rollout="${rolloutId}"] td`);
      // Waves started: 0 of 3, or 1 where a rollout controller already started the canary.
      // Each table loads with its own query, so the rollouts and the plans may fill after the modules table.
      await expect
        .poll(async () => (await rollout.allTextContents()).slice(0, 6), { timeout: 15_000 })
        .toEqual([rolloutId, 'nginx', '1.24.0 → 1.26.1', 'running', expect.stringMatching(/^[01]\/3$/), '3']);
      expect(await page.getByRole('table', { name: 'Templates' }).locator('tr[data-template="web"] td').nth(1).textContent()).toBe('nginx ^1.24');
      expect(await page.getByRole('table', { name: 'Module publishers' }).locator('tr[data-publisher="acme"] td').nth(2).textContent()).toBe(acme.publicKey);
      const plans = page.getByRole('table', { name: 'Hosts and their plans' }).locator('tbody tr');
      await expect
        .poll(() => plans.evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-assignment'), r.children[3]!.textContent])), { timeout: 15_000 })
        .toEqual(hosts.map((h) => [h, 'nginx@1.24.0']));
      expect(await unnamedControls(page)).toEqual([]);

      await page.getByRole('link', { name: 'nginx', exact: true }).first().click();
      await page.getByRole('heading', { level: 1, name: 'Module nginx' }).waitFor();
      const versions = page.getByRole('table', { name: 'Published versions' }).locator('tbody tr');
      await expect
        .poll(() => versions.evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-version'), r.children[1]!.textContent, r.children[2]!.textContent])), {
          timeout: 15_000,
        })
        .toEqual(['1.24.0', '1.26.1'].map((v) => [v, 'acme', `${acme.publicKey} (current key)`]));
      const running = page.getByRole('table', { name: 'Hosts whose plan has nginx' }).locator('tbody tr td:nth-child(2)');
      await expect.poll(() => running.allTextContents(), { timeout: 15_000 }).toEqual(['1.24.0', '1.24.0', '1.24.0']);
      expect(await unnamedControls(page)).toEqual([]);

      for (const [width, height] of [
        [1280, 800],
        [390, 844],
      ] as const) {
        await page.setViewportSize({ width, height });
        for (const path of ['/modules', '/modules/nginx', `/rollouts/${rolloutId}`]) {
          await page.goto(`${stack.api}${path}`);
          await page.getByRole('heading', { level: 1 }).waitFor();
          await page.locator('table').first().waitFor();
          // Nothing makes the page wider than the screen: wide tables scroll inside their own box.
          expect([path, width, await page.evaluate('document.documentElement.scrollWidth')]).toEqual([path, width, width]);
          await screenshot(`page${path.replaceAll('/', '-')}-${width}`);
        }
      }
      // A viewer reads the rollout and is offered none of its verbs (the API refuses them to it).
      expect(await page.getByRole('group', { name: 'Rollout actions' }).count()).toBe(0);
      // With Modules in the navigation the top bar still holds one line at 1280 px, even while reconnecting: Sign
      // out's middle is level with the brand's (a wrapped button sits a whole row lower).
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.locator('.live').evaluate((status) => (status.textContent = 'reconnecting…'));
      const middle = async (selector: string) => {
        const box = (await page.locator(selector).first().boundingBox())!;
        return box.y + box.height / 2;
      };
      expect(Math.abs((await middle('.topbar > button')) - (await middle('.topbar .brand')))).toBeLessThan(4);
      await screenshot('topbar-reconnecting-1280');
      expect(consoleErrors).toEqual([]);
    },
  );

  it('shows each wave’s hosts change live as the controller records them, and pauses the rollout behind a confirmation', { timeout: 180_000 }, async () => {
    const { page, consoleErrors, screenshot } = await browser.newPage();
    await signIn(page, stack.api, operator, `/rollouts/${rolloutId}`);
    await page.getByText('live', { exact: true }).waitFor({ timeout: 15_000 });
    await page.evaluate('window.notReloaded = true');
    const outcome = (host: string) => page.locator(`tr[data-host="${host}"]`).getAttribute('data-outcome', { timeout: 15_000 });
    const status = () => page.locator('[data-status]').getAttribute('data-status', { timeout: 15_000 });
    const live = { timeout: 15_000, interval: 100 };
    expect(await page.locator('section.wave h3').allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^Wave 0 \(canary\)/)]));
    expect(await outcome('web-3')).toBe('queued');

    await engine('fleet.startWave', { wave: 0 });
    await expect.poll(() => outcome('web-1'), live).toBe('pending');
    await engine('fleet.recordHostOutcome', { host: 'web-1', outcome: 'healthy' });
    await expect.poll(() => outcome('web-1'), live).toBe('healthy');
    await engine('fleet.startWave', { wave: 1 });
    await expect.poll(() => outcome('web-2'), live).toBe('pending');
    await screenshot('rollout-wave-live');

    // Pause, confirmed: the page says paused without a reload; the dialog named what pausing does.
    const actions = page.getByRole('group', { name: 'Rollout actions' });
    expect(await actions.getByRole('button').allTextContents()).toEqual(['Pause', 'Abort']);
    await actions.getByRole('button', { name: 'Pause' }).click();
    const pause = page.getByRole('dialog', { name: `Pause: rollout ${rolloutId}` });
    expect(await pause.textContent()).toMatch(/No further wave starts/);
    expect(await unnamedControls(page)).toEqual([]);
    await screenshot('rollout-pause-confirm');
    await pause.getByRole('button', { name: 'Pause' }).click();
    await pause.waitFor({ state: 'hidden', timeout: 15_000 });
    await expect.poll(status, live).toBe('paused');
    await expect.poll(() => actions.getByRole('button').allTextContents(), live).toEqual(['Resume', 'Roll back', 'Abort']);

    // A refusal stays in the dialog with its problem code: web-2 has not reported, so nothing can be rolled back yet.
    await actions.getByRole('button', { name: 'Roll back' }).click();
    const rollback = page.getByRole('dialog', { name: `Roll back: rollout ${rolloutId}` });
    await rollback.getByRole('button', { name: 'Roll back' }).click();
    await expect.poll(() => rollback.getByRole('alert').textContent(), live).toMatch(/^ILLEGAL_TRANSITION .*waits for web-2/);
    await screenshot('rollout-rollback-refused');
    await rollback.getByRole('button', { name: 'Cancel' }).click();

    // What the wave in flight reports still counts while paused: a timed-out host fails its wave, which halts the rollout.
    await engine('fleet.recordHostOutcome', { host: 'web-2', outcome: 'timed-out' });
    await expect.poll(() => outcome('web-2'), live).toBe('timed-out');
    await expect.poll(status, live).toBe('halted');
    expect(await outcome('web-3')).toBe('queued');
    expect(await page.locator('[data-status]').textContent()).toBe('Halted (wave_failed; failed: web-2): continue, roll back or abort.');
    await expect.poll(() => actions.getByRole('button').allTextContents(), live).toEqual(['Continue', 'Roll back', 'Abort']);
    await screenshot('rollout-halted');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    // The browser logs the refused rollback's 409 itself; nothing else went wrong.
    expect(consoleErrors).toEqual([expect.stringMatching(new RegExp(`status of 409 .*/v1/rollouts/${rolloutId}/rollback\\)$`))]);
  });
});
