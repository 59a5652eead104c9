import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIso9660 } from '../../plugins/sdk/iso9660.ts';
import { createRedfishClient, type RedfishClient } from '../../daemon/redfish/index.ts';
import { readOsMarker } from '../../daemon/simulator/autoinstall.ts';
import { startSimulatedMachine, type SimulatedMachine } from '../../daemon/simulator/machine.ts';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { Streams, Subjects } from '../../schemas/subjects.ts';
import { parseJoinToken } from '../../schemas/trust/joinTokens.ts';
import { startJoinService, type JoinService } from '../../services/trust/join/joinService.ts';
import { startControlPlaneResultIntake, type ResultIntake } from '../../services/agents/resultIntake.ts';
import { mintJoinToken, type CommandSender } from '../../services/trust/joinToken/mint.ts';
import { jetstreamManager, jetstream } from '@nats-io/jetstream';
import { startBackbone } from '../support/backboneFixture.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { streamMessages } from '../support/plaintextScan.ts';
import { agentCommand, log } from './harness.ts';

const bmcLogin = { username: 'admin', password: 'sim-password' };
const sshKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAutoinstall test@bc';

/** The user-data an autoinstall plugin renders: the `bcd node` join as a late-command, run in the target. */
const userData = (bcdNode: string) => `#cloud-config
autoinstall:
  version: 1
  identity: { hostname: node-a, username: ubuntu, password: "$6$x$y" }
  ssh: { install-server: true, authorized-keys: ["${sshKey}"] }
  late-commands:
    - echo 'managed by Better Compute' > /target/etc/motd
    - curtin in-target --target=/target -- ${bcdNode}
`;

describe('a simulated machine booting an autoinstall ISO from virtual media', () => {
  let env: Awaited<ReturnType<typeof startBackbone>>;
  let joins: JoinService;
  let intake: ResultIntake | undefined;
  const isos = new Map<string, Uint8Array>();
  let mediaServer: ReturnType<typeof createServer>;
  let mediaBase: string;
  const machines: SimulatedMachine[] = [];
  const clients: RedfishClient[] = [];

  const send: CommandSender = (name, payload, commandId) => env.bus.execute({ name, payload, commandId, actor: 'test' });
  const mintNodeToken = async (nodeId: string, productUuid: string) =>
    (await mintJoinToken(send, { role: 'node', siteId: 'dc1', nodeId, ttlSeconds: 600, expect: { productUuid } })).token;
  /** The SMBIOS UUID of the machine that installed first: what a misdirected token expects. */
  let firstMachineUuid = '00000000-0000-4000-8000-000000000001';

  const machine = async (nodeId: string, tree: string) => {
    const m = await startSimulatedMachine({
      siteId: 'dc1',
      nodeId,
      dataDir: join(env.dataDir, 'machines'),
      bmc: { tree, ...bmcLogin, powerDelayMs: 10, mediaDelayMs: 10 },
      diskSizeBytes: 4 << 20,
      bootUrl: () => undefined,
      log,
    });
    machines.push(m);
    await send('metal.enroll', enrollPayload(nodeId), `enroll-${nodeId}`);
    const redfish = createRedfishClient({ baseUrl: m.bmc.url, ...bmcLogin, auth: 'basic', timeoutMs: 5_000, timing: { pollIntervalMs: 20 } });
    clients.push(redfish);
    const productUuid = (await redfish.getInventory()).productUuid!;
    return { m, redfish, productUuid };
  };

  /** What the platform does: mount the ISO on the BMC, boot once from CD, power-cycle. */
  const bootFromIso = async (redfish: RedfishClient, name: string, iso?: Uint8Array) => {
    if (iso) isos.set(name, iso);
    await redfish.insertMedia(`${mediaBase}/${name}`);
    await redfish.setOneTimeBoot('Cd');
    await redfish.setPower('cycle');
  };

  const seedIso = (bcdNode: string) =>
    buildIso9660({
      volumeId: 'cidata',
      files: [
        { name: 'user-data', content: userData(bcdNode) },
        { name: 'meta-data', content: 'instance-id: i-1\n' },
      ],
    });

  const eventTypes = async (subject: string) =>
    (await streamMessages(env.nc, Streams.events.name))
      .filter((m) => m.subject === subject)
      .map((m) => JSON.parse(m.text.slice(m.text.indexOf('\n') + 1)).events[0]);

  /** Publishes a node command and returns its result, verified against the node agent's key. */
  const runOnNode = async (command: AgentCommand, key: { agentId: string; publicKey: string; keyId: string }) => {
    await jetstream(env.nc).publish(Subjects.nodeAgentCommands(command.siteId, command.nodeId), JSON.stringify(command), { msgID: command.commandId });
    const jsm = await jetstreamManager(env.nc);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const msg = await jsm.direct.getMessage(Streams.agentResults.name, {
        last_by_subj: Subjects.acceptedAgentResult(command.siteId, command.nodeId, command.commandId, command.nonce),
      });
      if (msg)
        return verifyAgentResult(msg.data, command, (id) =>
          id === key.agentId ? { keyId: key.keyId, publicKey: key.publicKey, role: 'node', siteId: 'dc1', nodeId: command.nodeId } : undefined,
        );
    }
    throw new Error(`no result for ${command.commandId}`);
  };

  beforeAll(async () => {
    env = await startBackbone({ projectors: false });
    joins = startJoinService(env.nc, env.store, log);
    intake = await startControlPlaneResultIntake(env.nc, { repository: env.bus.repository, bus: env.bus, log });
    await send('site.create', { siteId: 'dc1', name: 'DC 1' }, 'site-create-dc1');
    mediaServer = createServer((req, res) => {
      const iso = isos.get((req.url ?? '').replace(/^\/iso\//, ''));
      if (!iso) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/x-iso9660-image', 'content-length': iso.length }).end(iso);
    });
    await new Promise<void>((resolve) => mediaServer.listen(0, '127.0.0.1', resolve));
    mediaBase = `http://127.0.0.1:${(mediaServer.address() as AddressInfo).port}/iso`;
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const m of machines) await m.close();
    await joins?.stop();
    await intake?.stop();
    await new Promise<void>((resolve) => (mediaServer ? mediaServer.close(() => resolve()) : resolve()));
    await env?.[Symbol.asyncDispose]();
  });

  it('installs the OS, joins its node agent with the single-use token, and restarts it from disk with the kept key', { timeout: 120_000 }, async () => {
    const { m, redfish, productUuid } = await machine('dc1-a', 'hpe-ilo5-dl325');
    firstMachineUuid = productUuid;
    const token = await mintNodeToken('dc1-a', productUuid);
    const iso = seedIso(`bcd node --site dc1 --node dc1-a --nats ${env.nats.url} --state /var/lib/bcd --join-token ${token}`);
    await bootFromIso(redfish, 'a/seed.iso', iso);

    const agent = await m.nodeAgentStarted();
    expect(m.runState).toBe('os');
    expect(agent.agentId).toBe('node-dc1-a');
    const isoSha256 = createHash('sha256').update(iso).digest('hex');
    expect(m.installs).toEqual([
      {
        isoSha256,
        mediaUrl: expect.stringMatching(/\/iso\/a\/seed\.iso$/),
        lateCommands: [expect.stringContaining('/target/etc/motd'), expect.stringContaining('bcd node --site dc1')],
      },
    ]);
    expect(m.ignoredLateCommands).toEqual([expect.stringContaining('/target/etc/motd')]);
    expect(readOsMarker(m.disks[0]!)).toEqual({ installer: 'ubuntu-autoinstall', isoSha256 });
    expect(JSON.parse(readFileSync(`${m.disks[0]!}.userdata.json`, 'utf8'))).toEqual({ userData: null, sshKeys: [sshKey] });

    // The join service spent the token and registered the node agent's key under role node.
    const tokenId = parseJoinToken(token)!.tokenId;
    expect((await eventTypes(`bc.evt.trust.joinToken.${tokenId}`)).map((e) => e.type)).toEqual(['JoinTokenCreated', 'JoinTokenUsed']);
    const registered = await eventTypes('bc.evt.trust.agent.node-dc1-a');
    expect(registered).toEqual([
      expect.objectContaining({ type: 'AgentRegistered', data: expect.objectContaining({ role: 'node', nodeId: 'dc1-a', publicKey: agent.publicKey }) }),
    ]);
    const reuse = await env.nc.request(
      'bc.join.node',
      JSON.stringify({
        token,
        publicKey: Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
        siteId: 'dc1',
        nodeId: 'dc1-a',
        productUuid,
      }),
    );
    expect(reuse.json()).toMatchObject({ ok: false, error: { code: 'JOIN_TOKEN_USED' } });

    // The node agent serves its durable: inventory yes, wiping the disk it runs from no.
    const key = { agentId: agent.agentId, publicKey: agent.publicKey, keyId: agent.keyId };
    const inventory = await runOnNode(agentCommand('inventory.report', { nodeId: 'dc1-a' }), key);
    expect(inventory).toMatchObject({ ok: true, result: { ok: true, agentId: 'node-dc1-a', payload: { disks: [{ path: m.disks[0] }] } } });
    // Its refusal of a wipe is signed like any answer, but a node agent never speaks for a wipe: the result intake
    // does not store it (only the ramdisk a workflow booted may answer one).
    const wipeCommand = agentCommand('disk.wipe', { nodeId: 'dc1-a', params: { mode: 'zero' } });
    const wipeSubject = Subjects.agentResult('dc1', 'dc1-a', wipeCommand.commandId, wipeCommand.nonce);
    const answered = env.nc.subscribe(wipeSubject, { max: 1 });
    await jetstream(env.nc).publish(Subjects.nodeAgentCommands('dc1', 'dc1-a'), JSON.stringify(wipeCommand), { msgID: wipeCommand.commandId });
    let refusal: Uint8Array | undefined;
    for await (const msg of answered) refusal = msg.data;
    expect(decodeSignedResult(refusal!).result).toMatchObject({ ok: false, errorCode: 'WRONG_AGENT' });
    const retold = await env.nc.request(wipeSubject, refusal, { timeout: 10_000 });
    expect(retold.json()).toMatchObject({ error: { description: expect.stringMatching(/^RESULT_REFUSED: .*NOT_AUTHORISED/) } });
    const stored = await jetstreamManager(env.nc).then((jsm) =>
      jsm.direct.getMessage(Streams.agentResults.name, {
        last_by_subj: Subjects.acceptedAgentResult('dc1', 'dc1-a', wipeCommand.commandId, wipeCommand.nonce),
      }),
    );
    expect(stored).toBeNull();
    expect(readOsMarker(m.disks[0]!)).toEqual({ installer: 'ubuntu-autoinstall', isoSha256 });

    // Power off stops it; booting from disk starts the installed OS's agent again with the same key and no token.
    await redfish.ejectMedia();
    await redfish.setPower('off');
    await expect.poll(() => m.runState, { timeout: 30_000 }).toBe('off');
    expect(m.nodeAgent).toBeUndefined();
    await redfish.setPower('on');
    const again = await m.nodeAgentStarted();
    expect(again.keyId).toBe(agent.keyId);
    expect(m.runState).toBe('os');
    expect(await runOnNode(agentCommand('inventory.report', { nodeId: 'dc1-a' }), key)).toMatchObject({ ok: true, result: { ok: true } });
    expect(m.installs).toHaveLength(1);
    expect(await eventTypes('bc.evt.trust.agent.node-dc1-a')).toHaveLength(1);
  });

  it('fails the boot when the BMC cannot fetch the ISO, and refuses a token that expects another machine', { timeout: 120_000 }, async () => {
    const { m, redfish, productUuid } = await machine('dc1-b', 'dmtf-public-tower');
    await bootFromIso(redfish, 'b/missing.iso');
    await expect.poll(() => m.runState, { timeout: 30_000 }).toBe('bootFailed');
    expect(m.installs).toEqual([]);

    await redfish.setPower('off');
    await expect.poll(() => m.runState, { timeout: 30_000 }).toBe('off');
    expect(firstMachineUuid).not.toBe(productUuid);
    const token = await mintNodeToken('dc1-b', firstMachineUuid);
    await bootFromIso(redfish, 'b/seed.iso', seedIso(`BC_JOIN_TOKEN=${token} bcd node --site dc1 --node dc1-b --nats ${env.nats.url} --state /var/lib/bcd`));
    // The install ran, then its `bcd node` late-command was refused, which fails the install as in subiquity.
    await expect.poll(() => m.runState, { timeout: 60_000 }).toBe('bootFailed');
    expect(m.installs).toHaveLength(1);
    expect(m.nodeAgent).toBeUndefined();
    const tokenEvents = await eventTypes(`bc.evt.trust.joinToken.${parseJoinToken(token)!.tokenId}`);
    expect(tokenEvents).toEqual([
      expect.objectContaining({ type: 'JoinTokenCreated' }),
      expect.objectContaining({ type: 'JoinRefused', data: expect.objectContaining({ reason: 'JOIN_EXPECTATION_FAILED' }) }),
    ]);
    expect(await eventTypes('bc.evt.trust.agent.node-dc1-b')).toEqual([]);
  });
});
