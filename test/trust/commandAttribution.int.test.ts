import { headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { CommandHeaders } from '../../schemas/commandHeaders.ts';
import { Inboxes, Subjects } from '../../schemas/subjects.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { signCommand } from '../../services/platform/commands/commandSender.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { identityOf } from '../../services/platform/nats/connectionIdentity.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import { tempDir } from '../support/natsServer.ts';
import { startTestBroker } from './brokerFixture.ts';

type Answer = { ok: true; result: { seq: number; duplicate: boolean; events: unknown[] } } | { ok: false; error: { code: string } };

/**
 * Issue 31, item 12: commands over NATS were recorded as `nats:anonymous`, whoever sent them. Here a plugin holds what
 * `better-compute plugin creds` gives it (a control-plane credential of its own) on a broker in operator mode, as
 * `npm start` runs it, and tries to act unattributed or as another process.
 */
describe('NATS command attribution under broker auth', () => {
  it('records the credential that signed a command, and refuses unsigned, altered, borrowed and stale requests', async () => {
    await using broker = await startTestBroker();
    const connected: NatsConnection[] = [];
    const connectAs = async (name: string) => {
      const issued = await issueServiceCredentials(broker.material, name);
      const nc = await connectNats(broker.server.url, name, { credentials: { creds: issued.creds, inboxPrefix: Inboxes.controlPlane } });
      connected.push(nc);
      return { nc, userKey: issued.publicKey };
    };
    using dir = tempDir('bc-attribution-');
    const commands = await connectAs('commands');
    const config = loadConfig({}, { dataDir: dir.path, natsUrl: broker.server.url, logLevel: 'silent' });
    await ensureStreams(commands.nc, config);
    const store = await openEventStore(commands.nc, config);
    const responder = serveCommands(commands.nc, new CommandBus(store, allCommands, { retries: 5 }), createLogger('test', 'silent'), undefined, {
      partitions: false,
    });
    const actorOf = async (siteId: string) => {
      for await (const stored of store.readAfter(Subjects.aggregateEvents('site', 'site', siteId), 0)) return stored.batch.events[0]?.metadata.actor;
      return undefined;
    };
    try {
      const orchestrator = await connectAs('workflow-orchestrator');
      const plugin = await connectAs('plugin-acme');

      // What each sends through the platform is signed as itself and recorded under its own credential.
      await sendCommand(plugin.nc, 'site.create', { siteId: 'p1', name: 'By the plugin' });
      expect(await actorOf('p1')).toBe(`nats:control-plane:plugin-acme:${plugin.userKey}`);
      // Control-plane credentials may read bc.>: the plugin sees the orchestrator's next request on the wire.
      const captured = new Promise<Msg>((resolve) => plugin.nc.subscribe(Subjects.allCommands, { max: 1, callback: (_err, msg) => resolve(msg) }));
      await plugin.nc.flush();
      await sendCommand(orchestrator.nc, 'site.create', { siteId: 'o1', name: 'By the orchestrator' });
      expect(await actorOf('o1')).toBe(`nats:control-plane:workflow-orchestrator:${orchestrator.userKey}`);
      const theirs = await captured;

      const ask = async (body: string, h = natsHeaders()) =>
        (await plugin.nc.request(Subjects.command('site.create'), body, { headers: h, timeout: 5_000 })).json<Answer>();
      const codeOf = (answer: Answer) => (answer.ok ? 'accepted' : answer.error.code);
      // Unsigned, as the plugin's own raw request: refused, nothing appended.
      expect(codeOf(await ask(JSON.stringify({ siteId: 'x1', name: 'Unsigned' })))).toBe('COMMAND_SENDER_UNPROVEN');
      // The orchestrator's captured request with another body: its signature covers the body.
      expect(codeOf(await ask(JSON.stringify({ siteId: 'x2', name: 'Altered' }), theirs.headers))).toBe('COMMAND_SENDER_UNPROVEN');
      // The orchestrator's JWT (read off the wire), a command of the plugin's own, signed with the plugin's own key.
      const borrowed = natsHeaders();
      const body = new TextEncoder().encode(JSON.stringify({ siteId: 'x3', name: 'Borrowed' }));
      signCommand(
        { ...identityOf(plugin.nc)!, jwt: theirs.headers!.get(CommandHeaders.sender) },
        { name: 'site.create', commandId: 'cmd-borrowed-1' },
        body,
        borrowed,
      );
      borrowed.set(CommandHeaders.commandId, 'cmd-borrowed-1');
      expect(codeOf(await ask(new TextDecoder().decode(body), borrowed))).toBe('COMMAND_SENDER_UNPROVEN');
      // Stale: a capture replayed later than the freshness window.
      const stale = natsHeaders();
      for (const [k, v] of theirs.headers!) stale.set(k, v[0]!);
      stale.set(CommandHeaders.sentAt, String(Number(theirs.headers!.get(CommandHeaders.sentAt)) - 120_000));
      expect(codeOf(await ask(new TextDecoder().decode(theirs.data), stale))).toBe('COMMAND_SENDER_UNPROVEN');
      // Verbatim and fresh: the same command id, so the same command, appended once and still the orchestrator's.
      const replay = await ask(new TextDecoder().decode(theirs.data), theirs.headers);
      expect(replay).toMatchObject({ ok: true, result: { duplicate: true } });
      for (const siteId of ['x1', 'x2', 'x3']) expect(await actorOf(siteId)).toBeUndefined();
      expect(await actorOf('o1')).toBe(`nats:control-plane:workflow-orchestrator:${orchestrator.userKey}`);

      // A site agent's JWT is no control-plane credential (and its broker permissions forbid bc.cmd.* anyway).
      const site = await broker.connectAgent({ role: 'site', siteId: 'dc1', agentId: 'site-dc1' });
      const agentJwt = /-----BEGIN NATS USER JWT-----\s*(\S+)/.exec(site.creds)![1]!;
      const asAgent = natsHeaders();
      for (const [k, v] of theirs.headers!) asAgent.set(k, v[0]!);
      asAgent.set(CommandHeaders.sender, agentJwt);
      expect(codeOf(await ask(new TextDecoder().decode(theirs.data), asAgent))).toBe('COMMAND_SENDER_UNPROVEN');
    } finally {
      responder.unsubscribe();
      for (const nc of connected) await nc.close();
    }
  });
});
