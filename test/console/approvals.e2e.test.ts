import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signIn, startConsoleRig } from '../support/consoleStack.ts';

function approverKeys() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

describe('web console for an approver', () => {
  it('approves a quorum batch with a key that stays in the browser, and the destructive steps then run', { timeout: 900_000 }, async () => {
    await using rig = await startConsoleRig(1);
    const { stack, browser, image } = rig;
    await stack.admin.waitForNodeState('sim-m001', 'ready', 300_000);
    const alice = approverKeys();
    const quorum = await stack.admin.command('pki.setApprovers', { approvers: [{ approverId: 'alice', publicKey: alice.publicKey }], threshold: 1 });
    expect(quorum.status).toBe(201);
    const approverToken = await stack.createToken('alice', 'approver');
    const deploy = await stack.admin.command('metal.deploy', { nodeId: 'sim-m001', imageUrl: image.url, imageSha256: image.sha256, role: 'host' });
    expect(deploy.status).toBe(201);
    const workflowId = (deploy.body.events[0].data as { workflowId: string }).workflowId;
    await expect.poll(async () => (await stack.admin.getJson('/v1/approvals?state=pending')).items.length, { timeout: 60_000 }).toBe(1);

    const { page, consoleErrors, screenshot } = await browser.newPage();
    const sent: string[] = [];
    page.on('request', (r) => sent.push(`${r.url()} ${r.postData() ?? ''}`));
    await signIn(page, stack.api, approverToken, '/approvals');
    const batch = page.getByRole('article', { name: 'Approval: deploy on node sim-m001' });
    await expect.poll(() => batch.textContent(), { timeout: 15_000 }).toContain(`overwrite the disk with the image ${image.url}`);
    expect(await batch.textContent()).toContain('power-cycle (reboot) the machine');
    // Held: nothing destructive has started while the batch waits.
    const held = await stack.admin.getJson(`/v1/workflows/${workflowId}`);
    expect(held.steps.find((s: { stepId: string }) => s.stepId === 'image.write').attempts).toBe(0);

    await page.getByLabel('Approver id').fill('alice');
    await page.getByLabel('Ed25519 private key (PKCS#8 PEM)').fill(alice.pem);
    await page.getByRole('button', { name: 'Load key' }).click();
    await page.getByText('Signing as approver alice').waitFor();
    expect(await page.getByLabel('Ed25519 private key (PKCS#8 PEM)').count()).toBe(0);
    await screenshot('approval-pending');
    await batch.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog', { name: 'Approve: deploy on node sim-m001' }).getByRole('button', { name: 'Sign and approve' }).click();
    await page.getByText('No pending batches.').waitFor({ timeout: 15_000 });

    await stack.admin.waitForNodeState('sim-m001', 'deployed', 300_000);
    const ran = await stack.admin.getJson(`/v1/workflows/${workflowId}`);
    expect(ran.steps.filter((s: { destructive: boolean }) => s.destructive).map((s: { stepId: string; state: string }) => [s.stepId, s.state])).toEqual([
      ['power.set', 'succeeded'],
      ['image.write', 'succeeded'],
      ['power.set', 'succeeded'],
    ]);
    const approval = await stack.admin.getJson(`/v1/approvals/${workflowId}`);
    expect(approval).toMatchObject({ state: 'approved', grantedBy: ['alice'] });
    await page.goto(`${stack.api}/workflows/${workflowId}`);
    await expect.poll(() => page.locator('tr[data-step="image.write"]').getAttribute('data-state'), { timeout: 10_000 }).toBe('succeeded');
    await screenshot('approval-ran');

    // The key signed in the page: neither it nor its PEM went anywhere.
    const pemBody = alice.pem.split('\n')[1]!;
    expect(sent.filter((r) => r.includes(pemBody) || r.includes('PRIVATE KEY'))).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
