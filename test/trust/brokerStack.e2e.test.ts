import { AuthorizationError, connect } from '@nats-io/transport-node';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Streams } from '../../schemas/subjects.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import { freePort } from '../support/freePort.ts';
import { startImageServer } from '../support/imageServer.ts';
import { tempDir } from '../support/natsServer.ts';
import { leaks, streamMessages } from '../support/plaintextScan.ts';
import { startStackProcess } from '../support/stackProcess.ts';

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();
const eventTypesOf = (text: string): string[] => (JSON.parse(text.slice(text.indexOf('\n') + 1)) as { events: { type: string }[] }).events.map((e) => e.type);

describe('npm start under broker permissions (the default: operator mode)', () => {
  it(
    'deploys a simulated machine whose site agent, ramdisk and installed host joined with single-use tokens, with no token anywhere',
    { timeout: 240_000 },
    async () => {
      using dir = tempDir();
      await using image = await startImageServer(undefined, { partitioned: true });
      await using stack = await startStackProcess(
        // A plugin from the deployment's config runs under the stack's credentials like any other service.
        { BC_DATA_DIR: dir.path, BC_SIM_MACHINES: '1', BC_SIM_BMC_PORT_BASE: '0', BC_LOG_LEVEL: 'info', BC_PLUGINS: 'plugins/acme-autoinstall/index.ts' },
        await freePort(),
      );
      const auth = { authorization: `Bearer ${stack.token}` };
      const nodeId = 'sim-m001';
      const node = () => json(fetch(`${stack.api}/v1/nodes/${nodeId}`, { headers: auth }));
      await expect.poll(async () => (await node()).state, { timeout: 90_000, interval: 250 }).toBe('ready');

      const deploy = await fetch(`${stack.api}/v1/commands/metal.deploy`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ nodeId, imageUrl: image.url, imageSha256: image.sha256, role: 'worker', sshKeys: ['ssh-ed25519 AAAA test'] }),
      });
      expect(deploy.status).toBe(201);
      await expect.poll(async () => (await node()).state, { timeout: 120_000, interval: 250 }).toBe('deployed');

      // Release, then an autoinstall deploy: the installed host fetches the public join credential from the API
      // (`/v1/join-creds`, no token) and joins as a node agent with the single-use token from its seed ISO.
      const post = (name: string, body: unknown) =>
        fetch(`${stack.api}/v1/commands/${name}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post('metal.undeploy', { nodeId })).status).toBe(201);
      await expect.poll(async () => (await node()).state, { timeout: 120_000, interval: 250 }).toBe('ready');
      expect((await fetch(`${stack.api}/v1/join-creds`)).status).toBe(200);
      // The plugin registers its profile once it runs, which a loaded machine may not have let it do yet: a deploy
      // naming a profile nobody registered fails at once ("no profile ... is built in or registered"), as it should.
      const profiles = async () => ((await json(fetch(`${stack.api}/v1/profiles`, { headers: auth }))).items as { id: string }[]).map((p) => p.id);
      await expect.poll(profiles, { timeout: 60_000, interval: 250 }).toContain('ubuntu-24.04-autoinstall');
      expect((await post('metal.deploy', { nodeId, profile: 'ubuntu-24.04-autoinstall', role: 'host', sshKeys: ['ssh-ed25519 AAAA test'] })).status).toBe(201);
      await expect.poll(async () => (await node()).state, { timeout: 120_000, interval: 250 }).toBe('deployed');

      const natsUrl = /NATS\s+(nats:\/\/\S+)/.exec(stack.output())![1]!;
      // The broker takes no anonymous connection: agents could only have come in with issued credentials.
      await expect(connect({ servers: natsUrl, reconnect: false })).rejects.toBeInstanceOf(AuthorizationError);
      // What the stack prints for watching is a read-only inspector credential; reading the streams takes the control plane's.
      expect(stack.output()).toContain(`--creds ${join(dir.path, 'broker', 'creds', 'inspector.creds')}`);
      const creds = (await issueServiceCredentials(await loadOrCreateBrokerMaterial(join(dir.path, 'broker')), 'e2e-reader')).creds;
      const nc = await connectNats(natsUrl, 'e2e-reader', { credentials: { creds, inboxPrefix: '_INBOX' } });
      try {
        const events = await streamMessages(nc, Streams.events.name);
        const tokenEvents = events
          .filter((m) => m.subject.startsWith('bc.evt.trust.joinToken.'))
          .flatMap((m) => eventTypesOf(m.text).map((type) => ({ type, text: m.text })));
        const used = tokenEvents.filter((e) => e.type === 'JoinTokenUsed').map((e) => e.text);
        // The site agent and the deploy's ramdisk (and inspection boots none) each spent one token.
        expect(used.some((t) => t.includes('"agentId":"site-sim"'))).toBe(true);
        expect(used.some((t) => t.includes(`"agentId":"ramdisk-${nodeId}-`))).toBe(true);
        expect(used.some((t) => t.includes(`"agentId":"node-${nodeId}"`))).toBe(true);
        expect(events.filter((m) => m.subject.startsWith('bc.evt.trust.agent.ramdisk-')).length).toBeGreaterThanOrEqual(1);

        const commands = await streamMessages(nc, Streams.agentCommands.name);
        expect(commands.some((m) => m.text.includes('"image.write"'))).toBe(true);
        const places = [
          ...events.map((m) => ({ where: `BC_EVENTS#${m.seq}`, text: m.text })),
          ...commands.map((m) => ({ where: `BC_AGENT_COMMANDS#${m.seq}`, text: m.text })),
          { where: 'stack output', text: stack.output() },
        ];
        // Every token starts with `bcj_`: none is in the log, the agents' commands or any process output.
        expect(leaks(['bcj_'], places)).toEqual([]);
        expect(stack.output()).toContain('agent joined');
      } finally {
        await nc.close();
      }
    },
  );
});
