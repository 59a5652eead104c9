import { DeliverPolicy } from '@nats-io/jetstream';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedSite, type SimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { startSiteAgent } from '../../daemon/site/siteAgent.ts';
import { NodeLogLine } from '../../schemas/agent/nodeLog.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { agentCommand, log, startAgentBackbone } from './harness.ts';

/** Every line stored in BC_LOGS for one node, with the subject it was stored on. */
async function storedLines(env: Awaited<ReturnType<typeof startAgentBackbone>>, nodeId: string): Promise<{ subject: string; line: NodeLogLine }[]> {
  const filter = Subjects.nodeLogs('dc1', nodeId);
  const info = await env.jsm.streams.info(Streams.logs.name, { subjects_filter: filter });
  const total = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  if (total === 0) return [];
  const consumer = await env.js.consumers.get(Streams.logs.name, { filter_subjects: filter, deliver_policy: DeliverPolicy.All });
  const lines: { subject: string; line: NodeLogLine }[] = [];
  const batch = await consumer.fetch({ max_messages: total, expires: 5_000 });
  for await (const msg of batch) lines.push({ subject: msg.subject, line: NodeLogLine.parse(msg.json()) });
  return lines;
}

describe('node logs from a simulated site: the site agent and the ramdisk print what their commands did', () => {
  let env: Awaited<ReturnType<typeof startAgentBackbone>>;
  let site: SimulatedSite;
  const enrolled: { nodeId: string; bmc: { address: string; credentialsRef: string } }[] = [];
  const ok = (type: string) => JSON.stringify({ ok: true, result: { commandId: 'x', aggregate: { type, id: 'x' }, seq: 1, duplicate: false, events: [] } });

  beforeAll(async () => {
    env = await startAgentBackbone();
    env.nc.subscribe(Subjects.command('site.create'), { callback: (_e, msg) => void msg.respond(ok('site')) });
    env.nc.subscribe(Subjects.command('metal.enroll'), {
      callback: (_e, msg) => {
        enrolled.push(msg.json());
        msg.respond(ok('node'));
      },
    });
    site = await startSimulatedSite(
      env.nc,
      { siteId: 'dc1', machines: 1, bmcPortBase: 0, dataDir: join(env.dir, 'sim'), diskSizeBytes: 8 << 20, bmcDelayMs: 20 },
      log,
    );
    await site.siteAgent!.registered;
  });
  afterAll(async () => {
    await site?.stop();
    await env?.[Symbol.asyncDispose]();
  });

  it('logs BMC commands as site-agent lines, and a PXE-booted ramdisk its wipe with progress, each with its exit', async () => {
    const machine = site.machines[0]!;
    const bmc = enrolled[0]!.bmc;
    const inventory = agentCommand('inventory.read', { nodeId: machine.nodeId, bmc });
    await env.publish(inventory);
    expect(await env.result(inventory)).toMatchObject({ ok: true, result: { ok: true } });
    const boot = agentCommand('boot.setOnce', { nodeId: machine.nodeId, bmc, params: { target: 'Pxe' } });
    await env.publish(boot);
    await env.result(boot);
    const cycle = agentCommand('power.set', { nodeId: machine.nodeId, bmc, params: { action: 'cycle' } });
    await env.publish(cycle);
    await env.result(cycle);
    const ramdisk = await machine.ramdiskStarted();
    await ramdisk.registered;
    const wipe = agentCommand('disk.wipe', { nodeId: machine.nodeId, params: { mode: 'zero' } });
    await env.publish(wipe);
    expect(await env.result(wipe)).toMatchObject({ ok: true, result: { ok: true } });

    // Lines leave within the publisher's flush interval of being printed.
    await expect
      .poll(
        async () =>
          (await storedLines(env, machine.nodeId)).some((s) => s.line.commandId === wipe.commandId && s.line.text.startsWith('disk.wipe finished ok')),
        {
          timeout: 10_000,
        },
      )
      .toBe(true);
    const lines = await storedLines(env, machine.nodeId);
    const of = (commandId: string) => lines.filter((s) => s.line.commandId === commandId);

    const siteLines = of(inventory.commandId);
    expect(siteLines.map((s) => s.subject)).toEqual(siteLines.map(() => Subjects.nodeLog('dc1', machine.nodeId, 'site-agent')));
    expect(siteLines.map((s) => s.line.text)).toEqual([
      `inventory.read started (command ${inventory.commandId})`,
      expect.stringMatching(/^inventory\.read finished ok in \d+\.\d s$/),
    ]);
    expect(of(cycle.commandId).map((s) => s.line.source)).toEqual(['site-agent', 'site-agent']);

    const wipeLines = of(wipe.commandId);
    expect(wipeLines.every((s) => s.subject === Subjects.nodeLog('dc1', machine.nodeId, 'ramdisk') && s.line.source === 'ramdisk')).toBe(true);
    expect(wipeLines[0]!.line.text).toBe(`disk.wipe started (command ${wipe.commandId})`);
    expect(wipeLines.map((s) => s.line.text)).toContain(`zeroing ${machine.disks[0]!.split('/').pop()} (${8 << 20} bytes), then reading every byte back`);
    // The last progress of each phase says 100 %.
    const progress = wipeLines.filter((s) => s.line.stream === 'progress').map((s) => s.line.text);
    expect(progress).toEqual(
      expect.arrayContaining([expect.stringMatching(/^zero .+: 100% \(8 of 8 MiB\)$/), expect.stringMatching(/^verify .+: 100% \(8 of 8 MiB\)$/)]),
    );
    expect(wipeLines.at(-1)!.line.text).toMatch(/^disk\.wipe finished ok in /);

    // Nothing secret: not the BMC password, not the credential reference's secret, not a URL.
    const everything = JSON.stringify(lines);
    expect(everything).not.toContain('sim-password');
    expect(everything).not.toMatch(/https?:\/\//);
  });

  it("follows a machine's serial console file onto the node's serial lines", async () => {
    const stateDir = join(env.dir, 'serial-site');
    const serialFile = join(env.dir, 'dc9-m001.serial.log');
    writeFileSync(serialFile, 'before the agent\n');
    const agent = await startSiteAgent(env.nc, {
      siteId: 'dc9',
      stateDir,
      natsUrl: env.nats.url,
      credentials: { labFile: join(stateDir, 'credentials.json') },
      serialConsoles: { 'dc9-m001': serialFile },
      log,
    });
    try {
      const subject = Subjects.nodeLog('dc9', 'dc9-m001', 'serial');
      const stored = async () => {
        const info = await env.jsm.streams.info(Streams.logs.name, { subjects_filter: subject });
        return info.state.subjects?.[subject] ?? 0;
      };
      await new Promise((resolve) => setTimeout(resolve, 700));
      appendFileSync(serialFile, 'Ubuntu 24.04 dc9-m001 ttyS0\n');
      await expect.poll(stored, { timeout: 10_000 }).toBe(1);
      const last = await env.jsm.direct.getMessage(Streams.logs.name, { last_by_subj: subject });
      expect(NodeLogLine.parse(last!.json())).toMatchObject({ nodeId: 'dc9-m001', source: 'serial', stream: 'stdout', text: 'Ubuntu 24.04 dc9-m001 ttyS0' });
    } finally {
      await agent.stop();
    }
  });
});
