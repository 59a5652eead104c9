import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { sealingAad } from '../../../schemas/secrets/sealed.ts';
import { CommandBus } from '../../../services/platform/commands/commandBus.ts';
import { sendCommand } from '../../../services/platform/commands/sendCommand.ts';
import { openEventStore } from '../../../services/stack/runtime.ts';
import { putSecret } from '../../../services/secrets/secret/put.ts';
import { loadConfig } from '../../../services/platform/config.ts';
import { startNatsServer, type NatsServerProcess } from '../../../services/platform/nats/embeddedServer.ts';
import { ensureStreams } from '../../../services/platform/nats/streams.ts';
import { connectNats } from '../../../services/platform/nats/connect.ts';
import { MasterKey } from '../../../services/secrets/masterKey.ts';
import { seal } from '../../../services/secrets/sealing.ts';
import { AcmeCloud, issueAccountToken } from '../../../test/walkthroughs/acme-cloud/cloud.ts';
import { startServices, stopChild, type Child } from '../fleet/processes.ts';
import type { VpsBenchOptions } from './options.ts';

const PLUGIN_MODULE = fileURLToPath(new URL('../../../test/walkthroughs/acme-cloud/plugin.ts', import.meta.url));
export const POOL_ID = 'acme-pool';
export const FLAVOR_ID = 'small';
export const FLAVOR = { vcpus: 1, memoryMib: 1_024, diskGib: 25 } as const;

export interface VpsBenchStack {
  nats: NatsServerProcess;
  nc: NatsConnection;
  cloud: AcmeCloud;
  dataDir: string;
  services: Child[];
  stop(): Promise<void>;
}

/**
 * A nats-server, `commands` (×N), `projector:vps` and `vps-reconciler` as `serve.ts` processes, and the Acme emulator
 * in this process; the account token is sealed here with the master key the reconciler is given.
 */
export async function startVpsBenchStack(dir: string, options: VpsBenchOptions): Promise<VpsBenchStack> {
  const nats = await startNatsServer({ storeDir: join(dir, 'nats') });
  const nc = await connectNats(nats.url, 'vps-bench');
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const masterKey = randomBytes(32);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BC_NATS_URL: nats.url,
    // A bench server of its own on loopback: no broker auth to measure the control plane alone.
    BC_NATS_AUTH: 'none',
    BC_DATA_DIR: dataDir,
    BC_LOG_LEVEL: process.env.BC_LOG_LEVEL ?? 'warn',
    BC_MASTER_KEY: masterKey.toString('base64'),
    BC_PLUGINS: PLUGIN_MODULE,
    BC_VPS_RESYNC_MS: String(options.resyncMs),
    // Conflicts come back to the bench's clients, which count and retry them.
    BC_COMMAND_RETRIES: '0',
  };
  await ensureStreams(nc, loadConfig(env));
  const token = issueAccountToken();
  const cloud = await AcmeCloud.start({ token, bootMs: options.bootMs, pageSize: 100 });
  const names = [...Array.from({ length: options.commandProcesses }, () => 'commands'), 'projector:vps', 'vps-reconciler'];
  const services = names.map((name) => startServices([name], env, options.cpNodeArgs));
  const jsm = await jetstreamManager(nc);
  for (let i = 0; ; i++) {
    const dead = services.find((s) => s.proc.exitCode !== null);
    if (dead) throw new Error(`${dead.name} exited during start-up:\n${dead.output()}`);
    const durables = await Promise.all(
      ['projector_vps', 'vps_reconciler'].map((d) =>
        jsm.consumers.info('BC_EVENTS', d).then(
          () => true,
          () => false,
        ),
      ),
    );
    const commands = await nc.request('bc.cmd.site.create', '{}', { timeout: 1_000 }).then(
      () => true,
      () => false,
    );
    if (durables.every(Boolean) && commands) break;
    if (i > 600) throw new Error(`control plane did not start:\n${services.map((s) => `${s.name}: ${s.output()}`).join('\n')}`);
    await sleep(100);
  }
  const run = (name: string, payload: unknown) => sendCommand(nc, name, payload);
  // Secrets are never served over NATS: the bench seals and stores its provider token on a bus of its own.
  const edge = new CommandBus(await openEventStore(nc, loadConfig(env)), [putSecret], { retries: 5 });
  await edge.execute({
    name: 'secrets.put',
    payload: {
      secretId: 'acme-token',
      kind: 'provider-token',
      version: 1,
      sealed: seal(JSON.stringify(token), new MasterKey(masterKey), sealingAad('acme-token', 1)),
    },
    actor: 'bench',
  });
  await run('vps.createProviderAccount', {
    accountId: 'acme',
    providerId: 'acme-cloud',
    region: 'fra1',
    config: { endpoint: cloud.endpoint },
    tokenSecretId: 'acme-token',
  });
  await run('vps.createPool', { poolId: POOL_ID, class: 'provider', agent: 'none', accountId: 'acme' });
  await run('vps.createFlavor', { flavorId: FLAVOR_ID, ...FLAVOR });
  await run('vps.mapFlavor', { flavorId: FLAVOR_ID, poolId: POOL_ID, offerId: 'a1.small' });
  return {
    nats,
    nc,
    cloud,
    dataDir,
    services,
    stop: async () => {
      await Promise.all(services.map((s) => stopChild(s)));
      await nc.close().catch(() => undefined);
      await cloud.close();
      await nats.stop();
    },
  };
}
