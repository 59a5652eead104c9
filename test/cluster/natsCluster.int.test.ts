import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections/catalog.ts';
import { listNodes } from '../../projections/nodes/queries.ts';
import { Projector } from '../../services/projectors/projector.ts';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { ReadModelReader } from '../../projections/runtime/readModelReader.ts';
import { Buckets } from '../../schemas/subjects.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { sendCommand } from '../../services/platform/commands/sendCommand.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { busCommands } from '../../services/api/commandCatalog.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { probeAnonymousAccess } from '../../services/platform/nats/natsAccess.ts';
import { bucketStream, declaredStreams, ensureStreams } from '../../services/platform/nats/streams.ts';
import { openEventStore } from '../../services/stack/runtime.ts';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { issueJoinCredentials, issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import { enrollPayload } from '../support/commandPayloads.ts';
import { whileFailingOver } from '../support/failover.ts';
import { startTestCluster } from '../support/natsCluster.ts';
import { tempDir } from '../support/natsServer.ts';

const log = createLogger('test', 'silent');

/** Every stream the platform declares, buckets included, as the servers report it. */
async function replication(jsm: JetStreamManager) {
  const names = [...declaredStreams({ streamReplicas: 3, duplicateWindowMs: 120_000 }).map((s) => s.name), ...Object.values(Buckets).map(bucketStream)];
  return Promise.all(
    names.map(async (name) => {
      const info = await jsm.streams.info(name);
      return {
        name,
        replicas: info.config.num_replicas,
        leader: info.cluster?.leader ?? '',
        current: (info.cluster?.replicas ?? []).filter((r) => r.current).length,
      };
    }),
  );
}

describe('a 3-node NATS cluster', () => {
  it(
    'replicates every stream and bucket 3 ways, runs command → event → projection, and survives kill -9 of the event stream leader',
    { timeout: 180_000 },
    async () => {
      await using cluster = await startTestCluster();
      using dir = tempDir('bc-cluster-data-');
      const config = loadConfig({}, { dataDir: dir.path, natsUrl: cluster.url, natsAuth: 'none', streamReplicas: 3, logLevel: 'silent' });
      const nc = await connectNats(cluster.url, 'cluster-test');
      const serviceNc = await connectNats(cluster.url, 'cluster-commands');
      const projection = allProjections.find((p) => p.name === 'nodes')!;
      const files = new ReadModelFiles(dir.path, 'nodes');
      const reader = new ReadModelReader(files);
      let projector: Projector | undefined;
      try {
        const jsm = await ensureStreams(nc, config);
        const replicated = await replication(jsm);
        expect(replicated.map((s) => [s.name, s.replicas])).toEqual(replicated.map((s) => [s.name, 3]));
        expect(replicated.every((s) => s.leader !== '')).toBe(true);

        // The command service and the projector on one connection, the client on another: all through the cluster.
        const store = await openEventStore(serviceNc, config);
        const sub = serveCommands(serviceNc, new CommandBus(store, busCommands, { retries: config.commandRetries }), log);
        projector = new Projector(store, projection, files, log);
        await projector.start();
        await sendCommand(nc, 'site.create', { siteId: 'dc1', name: 'DC 1' }, { commandId: 'cluster-site-dc1' });
        let seq = 0;
        for (let i = 0; i < 5; i++)
          seq = (await sendCommand(nc, 'metal.enroll', enrollPayload(`before-${i}`), { commandId: `cluster-enroll-before-${i}` })).seq;
        await reader.waitFor(seq, 30_000);
        expect(listNodes(reader.db(), { limit: 100 }).items).toHaveLength(5);

        // kill -9 of the node leading BC_EVENTS: a new leader is elected among the other two, nothing acked is lost.
        const eventsLeader = replicated.find((s) => s.name === 'BC_EVENTS')!.leader;
        const victim = cluster.nodes.find((n) => n.name === eventsLeader)!;
        await victim.server.kill();
        for (let i = 0; i < 5; i++) {
          seq = (
            await whileFailingOver(() =>
              sendCommand(nc, 'metal.enroll', enrollPayload(`after-${i}`), { commandId: `cluster-enroll-after-${i}`, timeoutMs: 5_000 }),
            )
          ).seq;
        }
        await reader.waitFor(seq, 60_000);
        expect(
          listNodes(reader.db(), { limit: 100 })
            .items.map((n) => n.nodeId)
            .sort(),
        ).toEqual([...[0, 1, 2, 3, 4].map((i) => `after-${i}`), ...[0, 1, 2, 3, 4].map((i) => `before-${i}`)]);
        const after = await jsetstreamInfo(nc);
        expect(after.leader).not.toBe(eventsLeader);
        expect(after.messages).toBe(11);

        // The node comes back with its store and catches up: every replica of every stream current again.
        await victim.server.restart();
        for (let i = 0; ; i++) {
          const state = await whileFailingOver(() => replication(jsm));
          if (state.every((s) => s.current === 2)) break;
          if (i > 240) throw new Error(`replicas not current after the restart: ${JSON.stringify(state)}`);
          await sleep(250);
        }
        sub.unsubscribe();
      } finally {
        await projector?.stop().catch(() => undefined);
        reader.close();
        await serviceNc.close();
        await nc.close();
      }
    },
  );

  it(
    'runs broker auth on every node: strangers refused everywhere, control-plane credentials declare replicated streams, a join credential cannot write events',
    { timeout: 120_000 },
    async () => {
      using dir = tempDir('bc-cluster-broker-');
      const material = await loadOrCreateBrokerMaterial(join(dir.path, 'broker'));
      await using cluster = await startTestCluster({ broker: material });
      for (const node of cluster.nodes) expect(await probeAnonymousAccess(node.url), node.name).toBe('refused');
      expect(await probeAnonymousAccess(cluster.url)).toBe('refused');

      const service = await issueServiceCredentials(material, 'cluster-test');
      const nc = await connectNats(cluster.url, 'cluster-test', { credentials: { creds: service.creds, inboxPrefix: service.inboxPrefix } });
      const join_ = await issueJoinCredentials(material);
      const joinNc = await connectNats(cluster.url, 'cluster-join', { credentials: { creds: join_.creds, inboxPrefix: join_.inboxPrefix } });
      try {
        const jsm = await ensureStreams(nc, { streamReplicas: 3, duplicateWindowMs: 120_000 });
        expect((await replication(jsm)).every((s) => s.replicas === 3)).toBe(true);
        const denied = new Promise<string>((resolve) => {
          void (async () => {
            for await (const s of joinNc.status()) if (s.type === 'error') resolve(String(s.error));
          })();
        });
        joinNc.publish('bc.evt.metal.node.forged', 'x');
        expect(await Promise.race([denied, sleep(5_000).then(() => 'no error')])).toMatch(/permissions violation/i);
        expect((await jsm.streams.info('BC_EVENTS')).state.messages).toBe(0);
      } finally {
        await joinNc.close();
        await nc.close();
      }
    },
  );
});

async function jsetstreamInfo(nc: Parameters<typeof jetstreamManager>[0]) {
  const info = await whileFailingOver(async () => (await jetstreamManager(nc)).streams.info('BC_EVENTS'));
  return { leader: info.cluster?.leader ?? '', messages: info.state.messages };
}
