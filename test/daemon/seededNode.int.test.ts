import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulatedSite } from '../../daemon/simulator/simulatedSite.ts';
import { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { SEED_MAX_BYTES, SEED_PARTITION_TYPE, decodeNodeSeed } from '../../schemas/agent/nodeSeed.ts';
import { Streams } from '../../schemas/subjects.ts';
import { parseJoinToken } from '../../schemas/trust/joinTokens.ts';
import { BlobStore } from '../../services/blobs/blobStore.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { WorkflowExecutor } from '../../services/workflow/executor.ts';
import { startBootTokenService } from '../../services/trust/join/bootTokenService.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { startEngine } from '../metal/engineFixture.ts';
import { readPrefix } from '../support/diskFile.ts';
import { leaks, streamMessages } from '../support/plaintextScan.ts';

const SEED_LBA = 2048;

/** An image the deploy can seed: an MBR whose third entry is a `bc-seed` partition (type 0xda) at 1 MiB. */
function seedableImage(): Buffer {
  const image = randomBytes(2 << 20);
  image.fill(0, 0, 512);
  image.fill(0, SEED_LBA * 512, SEED_LBA * 512 + SEED_MAX_BYTES);
  image[446 + 32 + 4] = SEED_PARTITION_TYPE;
  image.writeUInt32LE(SEED_LBA, 446 + 32 + 8);
  image.writeUInt32LE(2048, 446 + 32 + 12);
  image[510] = 0x55;
  image[511] = 0xaa;
  return image;
}

describe('the deploy seeds the host it installs', () => {
  it(
    "writes a single-use node token into the image's bc-seed partition; the booted host's bcd node joins with it and zeroes it",
    { timeout: 120_000 },
    async () => {
      const captured: string[] = [];
      const log = createLogger('seeded-node-test', 'debug', { write: (line: string) => void captured.push(line) });
      await using engine = await startEngine();
      const { nc, store, bus } = engine;
      // The API's blob route, as machines reach it: the executor names this base in the seed's capability URL.
      const blobServer = createServer((req, res) => {
        const [, , , nodeId, capability, sha256] = (req.url ?? '').split('/');
        void BlobStore.open(nc, 'http://unused')
          .then((blobs) => blobs.read(nodeId!, capability!, sha256!))
          .then((bytes) => res.writeHead(200).end(Buffer.from(bytes)))
          .catch(() => res.writeHead(404).end());
      });
      await new Promise<void>((ok) => blobServer.listen(0, '127.0.0.1', ok));
      const blobBaseUrl = `http://127.0.0.1:${(blobServer.address() as { port: number }).port}`;
      await engine.executor.stop();
      const executor = new WorkflowExecutor(nc, store, engine.config, engine.log, { blobBaseUrl });
      await executor.start();

      const image = seedableImage();
      const sha256 = createHash('sha256').update(image).digest('hex');
      const imageServer = createServer((_req, res) => res.writeHead(200, { 'content-length': image.length }).end(image));
      await new Promise<void>((ok) => imageServer.listen(0, '127.0.0.1', ok));
      const imageUrl = `http://127.0.0.1:${(imageServer.address() as { port: number }).port}/seedable.img`;

      const joins = startJoinService(nc, store, log);
      const bootTokens = startBootTokenService(nc, store, log);
      const site = await startSimulatedSite(
        nc,
        {
          siteId: 'sd',
          machines: 1,
          bmcPortBase: 0,
          dataDir: join(engine.dataDir, 'sim', 'sd'),
          diskSizeBytes: 4 << 20,
          bmcDelayMs: 10,
          join: {},
          inProcess: (name, payload, commandId) => bus.execute({ name, payload, commandId, actor: 'test' }),
        },
        log,
      );
      const nodeId = 'sd-m001';
      try {
        await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'ready');
        await bus.execute({
          name: 'metal.deploy',
          payload: { nodeId, imageUrl, imageSha256: sha256, role: 'worker', sshKeys: [] },
          commandId: 'deploy-sd-m001-1',
          actor: 'test',
        });
        await engine.waitForNode(nodeId, (s) => s.exists && s.state === 'deployed', 90_000);
        const machine = site.machines[0]!;
        await machine.nodeAgentStarted();

        // The userdata.write command named the seed by capability URL and digest only; the blob holds the token.
        const commands = await streamMessages(nc, Streams.agentCommands.name);
        const userdata = commands.map((m) => AgentCommand.parse(JSON.parse(m.data))).find((c) => c.kind === 'userdata.write' && c.nodeId === nodeId)!;
        const seedRef = (userdata.params as { seed: { url: string; sha256: string } }).seed;
        expect(seedRef.url.startsWith(`${blobBaseUrl}/v1/blobs/${nodeId}/`)).toBe(true);
        const seed = decodeNodeSeed(new Uint8Array(await (await fetch(seedRef.url)).arrayBuffer()))!;
        expect(seed).toMatchObject({ siteId: 'sd', nodeId });
        const token = parseJoinToken(seed.joinToken)!;

        // The node agent joined with that very token: spent, and it registered node-<nodeId>.
        const events = await streamMessages(nc, Streams.events.name);
        const types = (subject: string) =>
          events.filter((m) => m.subject === subject).map((m) => JSON.parse(m.text.slice(m.text.indexOf('\n') + 1)).events[0].type);
        expect(types(`bc.evt.trust.joinToken.${token.tokenId}`)).toEqual(['JoinTokenCreated', 'JoinTokenUsed']);
        expect(types(`bc.evt.trust.agent.node-${nodeId}`)).toEqual(['AgentRegistered']);
        const created = events.find((m) => m.subject === `bc.evt.trust.joinToken.${token.tokenId}`)!;
        expect(created.text).toContain('"role":"node"');
        const node = await engine.nodeState(nodeId);
        expect(created.text).toContain(node.exists ? node.inventory!.productUuid! : 'none');

        // The host zeroed the seed after joining; the rest of the image is as written.
        const disk = readPrefix(machine.disks[0]!, image.length);
        expect(disk.subarray(SEED_LBA * 512, SEED_LBA * 512 + SEED_MAX_BYTES).equals(Buffer.alloc(SEED_MAX_BYTES))).toBe(true);
        expect(disk.subarray(0, SEED_LBA * 512).equals(image.subarray(0, SEED_LBA * 512))).toBe(true);

        const places = [
          ...events.map((m) => ({ where: `BC_EVENTS#${m.seq}`, text: m.text })),
          ...commands.map((m) => ({ where: `BC_AGENT_COMMANDS#${m.seq}`, text: m.text })),
          { where: 'logs', text: captured.join('') },
        ];
        expect(leaks([seed.joinToken, token.secret], places)).toEqual([]);
      } finally {
        await site.stop();
        await bootTokens.stop();
        await joins.stop();
        await executor.stop();
        imageServer.close();
        blobServer.close();
      }
    },
  );
});
