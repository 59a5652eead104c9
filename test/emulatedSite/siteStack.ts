import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { Inboxes } from '../../schemas/subjects.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { repoRoot } from '../../services/platform/repoRoot.ts';
import { readStackRecord } from '../../services/platform/stackRecord.ts';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import type { SiteNetwork } from '../../scripts/emulatedSite/siteNetwork.ts';
import type { StackAccess } from '../../scripts/emulatedSite/stackSite.ts';
import { freePort } from '../support/freePort.ts';
import { startStackProcess } from '../support/stackProcess.ts';

/**
 * `npm start` as the emulated site's README starts it, in operator mode (broker auth, the default): its API on every
 * address with the uplink's host end as its public URL (bcd site fetches the deploy's node seed there), and the
 * uplink's NATS relay as the agents' NATS URL (the seed names it). `natsRelayPort` is where `startSiteOnStack` will
 * relay NATS to on the uplink.
 */
export async function startStackForSite(net: SiteNetwork, dataDir: string, env: Record<string, string> = {}) {
  const httpPort = await freePort();
  const natsRelayPort = await freePort();
  const stack = await startStackProcess(
    {
      BC_DATA_DIR: dataDir,
      BC_SIM_MACHINES: '0',
      // The site's machines enrol as the hardware profile this config declares (examples/emulated-site/README.md).
      BC_CONFIG: join(repoRoot, 'examples/emulated-site/better-compute.config.ts'),
      BC_HTTP_HOST: '0.0.0.0',
      BC_PUBLIC_URL: `http://${net.hostIp}:${httpPort}`,
      BC_AGENT_NATS_URL: `nats://${net.hostIp}:${natsRelayPort}`,
      ...env,
    },
    httpPort,
  );
  const record = readStackRecord(dataDir);
  if (!record) throw new Error(`npm start wrote no stack record in ${dataDir}`);
  if (record.natsAuth !== 'operator') throw new Error(`the stack runs broker auth ${record.natsAuth}, not operator mode`);
  const access: StackAccess = { record, adminToken: stack.token };
  /** A connection of the caller's own on the stack's server, with control-plane credentials of its trust chain. */
  const connect = async (name: string): Promise<NatsConnection> => {
    const material = await loadOrCreateBrokerMaterial(join(dataDir, 'broker'));
    const { creds } = await issueServiceCredentials(material, name);
    return connectNats(record.natsUrl, name, { credentials: { creds, inboxPrefix: Inboxes.controlPlane } });
  };
  return { process: stack, access, api: stack.api, natsRelayPort, connect };
}
