import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSignedResult } from '../../schemas/agent/agentResultCodec.ts';
import { CommandJournal } from '../../daemon/agent/journal.ts';
import { startRamdiskAgent, type RamdiskAgent } from '../../daemon/ramdisk/ramdiskAgent.ts';
import { agentCommand, log, serveBytes, startAgentBackbone } from './harness.ts';

const DISK_BYTES = 6 << 20;

describe('bcd ramdisk', () => {
  let env: Awaited<ReturnType<typeof startAgentBackbone>>;
  let agent: RamdiskAgent;
  let disks: string[];

  beforeAll(async () => {
    env = await startAgentBackbone();
    disks = [join(env.dir, 'sda.img'), join(env.dir, 'sdb.img')];
    // Random content, so a wipe that skips any region is caught by the read-back below.
    for (const disk of disks) writeFileSync(disk, randomBytes(DISK_BYTES));
    agent = await startRamdiskAgent(env.nc, { siteId: 'dc1', nodeId: 'n1', stateDir: join(env.dir, 'ramdisk'), disks, log });
    await agent.registered;
  });
  afterAll(async () => {
    await agent?.stop();
    await env?.[Symbol.asyncDispose]();
  });

  it('registers as ramdisk-<nodeId>-<key prefix> with role ramdisk', () => {
    expect(agent.agentId).toMatch(/^ramdisk-n1-[a-z0-9]{8}$/);
    expect(env.registrations).toContainEqual({ agentId: agent.agentId, role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', publicKey: agent.publicKey });
  });

  it('reports the inventory of its disks', async () => {
    const cmd = agentCommand('inventory.report');
    await env.publish(cmd);
    expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: true, payload: { disks: disks.map((path) => ({ path, sizeBytes: DISK_BYTES })) } } });
  });

  it('writes user data and SSH keys onto the disk as a NoCloud seed (a cidata partition after the image)', async () => {
    execFileSync('sfdisk', ['--quiet', disks[0]!], { input: 'label: dos\nstart=2048, size=2048, type=83\n' });
    const cmd = agentCommand('userdata.write', { params: { userData: '#cloud-config\n', sshKeys: ['ssh-ed25519 AAAA test'] } });
    await env.publish(cmd);
    const verdict = await env.result(cmd);
    expect(verdict).toMatchObject({ ok: true, result: { ok: true, payload: { sshKeys: 1, cidata: { disk: disks[0], table: 'dos', verified: true } } } });
    const { offset } = (verdict as { result: { payload: { cidata: { offset: number } } } }).result.payload.cidata;
    const userData = execFileSync('mcopy', ['-i', `${disks[0]}@@${offset}`, '::user-data', '-'], { encoding: 'utf8' });
    expect(userData.startsWith('#cloud-config\n')).toBe(true);
    expect(parseYaml(userData)).toEqual({ ssh_authorized_keys: ['ssh-ed25519 AAAA test'] });
  });

  it('wipes every disk so that it reads back as zeros, and says so in the signed result', async () => {
    const cmd = agentCommand('disk.wipe', { params: { mode: 'zero' } });
    await env.publish(cmd);
    const verdict = await env.result(cmd);
    expect(verdict).toMatchObject({
      ok: true,
      result: {
        ok: true,
        payload: {
          method: 'zero',
          disks: disks.map((path) => ({ path, serial: null, model: null, sizeBytes: DISK_BYTES, method: 'zero', verifiedBytes: DISK_BYTES })),
        },
      },
    });
    for (const disk of disks) expect(readFileSync(disk).every((b) => b === 0)).toBe(true);
  });

  it('writes an image that the disk then starts with, verified by sha256', async () => {
    const image = randomBytes((2 << 20) + 12_345);
    await using upstream = await serveBytes(image);
    const cmd = agentCommand('image.write', { params: { imageUrl: upstream.url, sha256: upstream.sha256 } });
    await env.publish(cmd);
    expect(await env.result(cmd)).toMatchObject({
      ok: true,
      result: { ok: true, payload: { disk: disks[0], bytesWritten: image.length, sha256: upstream.sha256, verified: true } },
    });
    expect(readFileSync(disks[0]!).subarray(0, image.length).equals(image)).toBe(true);
  });

  it('fails image.write with IMAGE_CHECKSUM_MISMATCH on a wrong sha256 and leaves no image behind', async () => {
    const image = randomBytes(1 << 20);
    await using upstream = await serveBytes(image);
    const cmd = agentCommand('image.write', { params: { imageUrl: upstream.url, sha256: 'a'.repeat(64), disk: 'sdb.img' } });
    await env.publish(cmd);
    expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'IMAGE_CHECKSUM_MISMATCH' } });
    expect(
      readFileSync(disks[1]!)
        .subarray(0, image.length)
        .every((b) => b === 0),
    ).toBe(true);
  });

  it('refuses a command for another node with WRONG_AGENT, an answer the result intake does not store', async () => {
    const cmd = agentCommand('inventory.report', { nodeId: 'n2' });
    const published = env.nc.subscribe(`bc.site.dc1.res.n2.${cmd.commandId}.${cmd.nonce}`, { max: 1 });
    await env.js.publish('bc.site.dc1.node.n1.cmd', JSON.stringify(cmd), { msgID: cmd.commandId });
    let answer: Uint8Array | undefined;
    for await (const m of published) answer = m.data;
    expect(decodeSignedResult(answer!).result).toMatchObject({ ok: false, errorCode: 'WRONG_AGENT' });
    // No command with that id was sent to n2 (it went out on n1's subject): the intake stores nothing, and says so.
    const reply = await env.nc.request(`bc.site.dc1.res.n2.${cmd.commandId}.${cmd.nonce}`, answer, { timeout: 10_000 });
    expect(reply.json()).toMatchObject({ error: { description: expect.stringMatching(/^RESULT_COMMAND_UNKNOWN: /) } });
    expect(await env.resultCount(cmd)).toBe(0);
  });

  it('answers INTERRUPTED, not a second wipe, when the machine lost power mid-wipe', async () => {
    const disk = join(env.dir, 'big.img');
    writeFileSync(disk, '');
    truncateSync(disk, 256 << 20);
    const stateDir = join(env.dir, 'ramdisk-n9');
    const options = { siteId: 'dc1', nodeId: 'n9', stateDir, disks: [disk], ackWaitMs: 1_000, log };
    const first = await startRamdiskAgent(env.nc, options);
    const cmd = agentCommand('disk.wipe', { nodeId: 'n9' });
    await env.publish(cmd);
    const journal = new CommandJournal(stateDir);
    await expect.poll(() => journal.get(cmd.commandId)?.state, { interval: 2, timeout: 10_000 }).toBe('started');
    await first.stop();
    expect(journal.get(cmd.commandId)?.state).toBe('started');
    journal.close();

    const second = await startRamdiskAgent(env.nc, options);
    try {
      expect(await env.result(cmd)).toMatchObject({ ok: true, result: { ok: false, errorCode: 'INTERRUPTED' } });
    } finally {
      await second.stop();
    }
  });
});
