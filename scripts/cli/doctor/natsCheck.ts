import { connect, errors, type NatsConnection } from '@nats-io/transport-node';
import type { Finding } from '../../../schemas/doctor.ts';
import { brokerDirOf, type Config } from '../../../services/platform/config.ts';
import { probeAnonymousAccess } from '../../../services/platform/nats/natsAccess.ts';
import { natsServers } from '../../../services/platform/nats/serverList.ts';
import { NatsAccessError } from '../../../services/platform/nats/natsAccessError.ts';
import type { StackRecord } from '../../../services/platform/stackRecord.ts';
import { brokerMaterialExists, controlPlaneCredentials } from '../../../services/stack/controlPlaneConnection.ts';
import { brokerConnectOptions } from '../../../services/platform/nats/brokerConnection.ts';
import { loadOrCreateBrokerMaterial } from '../../../services/trust/broker/brokerMaterial.ts';
import { issueSystemCredentials } from '../../../services/trust/broker/userCredentials.ts';
import { finding } from './finding.ts';

export interface NatsReach {
  findings: Finding[];
  /** A control-plane connection, when the server could be reached with the credentials the stack would use. */
  nc?: NatsConnection;
  /** A system-account connection (operator mode with the trust chain at hand), for the server's own clock. */
  system?: NatsConnection;
}

/** One connection, no reconnects: the doctor reads once, and a dropped connection should fail its checks, not wait. */
const connectOnce = (url: string, name: string, credentials?: { creds: string; inboxPrefix: string }) =>
  connect({
    servers: natsServers(url),
    name,
    timeout: 10_000,
    reconnect: false,
    maxReconnectAttempts: 0,
    ...(credentials ? brokerConnectOptions(credentials) : {}),
  });

/**
 * Reaches the stack's NATS server the way its processes do and decides broker auth by what the server does, not by
 * what the configuration says: a server that lets a connection without credentials in is an anonymous broker.
 */
export async function checkNats(config: Config, record: StackRecord | undefined): Promise<NatsReach> {
  const url = config.natsUrl ?? record?.natsUrl;
  if (url === undefined)
    return {
      findings: [finding('nats', 'NATS_URL_UNKNOWN', 'error', 'BC_NATS_URL is unset and no running stack of this data dir recorded its server (stack.json)')],
    };
  const access = await probeAnonymousAccess(url);
  if (access === 'unreachable') return { findings: [finding('nats', 'NATS_UNREACHABLE', 'error', `no NATS server answers at ${url}`, { url })] };
  const findings: Finding[] = [];
  if (access === 'anonymous') {
    findings.push(
      finding(
        'broker',
        'BROKER_AUTH_OFF',
        'error',
        `the NATS server at ${url} lets connections without credentials in: anyone who reaches it reads every subject and may publish on any`,
        { url },
      ),
    );
  } else {
    findings.push(finding('broker', 'BROKER_AUTH_OK', 'info', `the NATS server at ${url} refuses connections without credentials`, { url }));
  }
  let nc: NatsConnection;
  try {
    const credentials = access === 'anonymous' ? undefined : await controlPlaneCredentials({ ...config, natsAuth: 'operator' }, 'doctor');
    nc = await connectOnce(url, 'doctor', credentials);
  } catch (err) {
    if (err instanceof NatsAccessError) return { findings: [...findings, finding('nats', 'NATS_CREDENTIALS_MISSING', 'error', err.message)] };
    if (err instanceof errors.AuthorizationError) {
      return {
        findings: [
          ...findings,
          finding(
            'nats',
            'NATS_CREDENTIALS_REFUSED',
            'error',
            `${url} refused the control plane's credentials: it does not trust the operator in ${brokerDirOf(config)}`,
            { url },
          ),
        ],
      };
    }
    return { findings: [...findings, finding('nats', 'NATS_UNREACHABLE', 'error', `cannot connect to ${url}: ${String(err)}`, { url })] };
  }
  findings.unshift(
    finding('nats', 'NATS_OK', 'info', `connected to ${url} (nats-server ${nc.info?.version ?? 'unknown'})`, { url, version: nc.info?.version }),
  );
  const dir = brokerDirOf(config);
  const system =
    access === 'refused' && brokerMaterialExists(dir)
      ? await issueSystemCredentials(await loadOrCreateBrokerMaterial(dir), { ttlSeconds: 300 })
          .then((creds) => connectOnce(url, 'doctor-system', { creds: creds.creds, inboxPrefix: creds.inboxPrefix }))
          .catch(() => undefined)
      : undefined;
  return { findings, nc, ...(system ? { system } : {}) };
}

/** The server's own clock, from its `$SYS.REQ.SERVER.PING` answer. */
export async function natsServerTime(system: NatsConnection): Promise<number | undefined> {
  try {
    const reply = await system.request('$SYS.REQ.SERVER.PING', '', { timeout: 2_000 });
    const time = reply.json<{ server?: { time?: string } }>().server?.time;
    return time ? Date.parse(time) : undefined;
  } catch {
    return undefined;
  }
}
