import type { NatsConnection } from '@nats-io/transport-node';
import { DoctorCheck, type DoctorReport, type Finding } from '../../../schemas/doctor.ts';
import { bootstrapTokenId, readAdminToken } from '../../../services/auth/bootstrap.ts';
import { parseToken } from '../../../services/auth/bearer.ts';
import { readStackRecord } from '../../../services/platform/stackRecord.ts';
import { checkApi } from './apiCheck.ts';
import { checkClock, type ClockSample } from './clockCheck.ts';
import { checkConfig } from './configCheck.ts';
import { skipped } from './finding.ts';
import { checkHardwareProfiles } from './hardwareProfileCheck.ts';
import { checkMasterKey } from './masterKeyCheck.ts';
import { checkNats, natsServerTime } from './natsCheck.ts';
import { checkProduction, type BootstrapTokenState } from './productionCheck.ts';
import { checkBmcs, checkSiteAgents, sitesOf } from './siteChecks.ts';
import { checkStreams } from './streamCheck.ts';

export interface DoctorOptions {
  /** The environment the stack's processes get (configuration, credentials, data dir). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The API; default what the running stack recorded, else `http://<BC_HTTP_HOST>:<BC_HTTP_PORT>`. */
  apiUrl?: string;
  /** An admin API token for the fleet checks; default `<dataDir>/admin.token`. */
  token?: string;
  /** This machine's clock (what server clocks are compared with). */
  now?: () => number;
}

/**
 * Checks a stack from its control-plane host: configuration, NATS and broker auth, JetStream and the declared streams,
 * the API and its read models, site agents, BMCs per site, the master key and clocks. Read-only: it creates nothing
 * (no key, no stream, no trust chain). Findings come in check order; any `error` makes `ok` false.
 */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const findings: Finding[] = [];
  const { config, findings: configFindings } = checkConfig(env);
  findings.push(...configFindings);
  if (!config) return reportOf(findings);

  const record = readStackRecord(config.dataDir);
  const clocks: ClockSample[] = [];
  const connections: NatsConnection[] = [];
  try {
    const nats = await checkNats(config, record);
    findings.push(...nats.findings);
    if (nats.nc) connections.push(nats.nc);
    if (nats.system) connections.push(nats.system);
    const natsTime = nats.system ? await natsServerTime(nats.system) : undefined;
    // The server answers with the time it handled the request: its resolution is the round trip.
    if (natsTime !== undefined) clocks.push({ source: 'nats', serverTimeMs: natsTime, resolutionMs: 250 });

    const streams = nats.nc ? await checkStreams(nats.nc, config) : undefined;
    if (streams) findings.push(...streams.findings);
    else findings.push(skipped('streams', 'NATS could not be reached'));

    const apiUrl = options.apiUrl ?? record?.apiUrl ?? `http://${config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost}:${config.httpPort}`;
    const token = options.token ?? readAdminToken(config.dataDir);
    const api = await checkApi(apiUrl, token, config.readyMaxLag);
    findings.push(...api.findings.filter((f) => !(f.code === 'BROKER_AUTH_OFF' && findings.some((seen) => seen.code === 'BROKER_AUTH_OFF'))));
    if (api.clock) clocks.push(api.clock);

    if (streams?.jsm) findings.push(...(await checkSiteAgents(streams.jsm, await sitesOf(streams.jsm, api.fleet?.sites))));
    else findings.push(skipped('siteAgents', 'JetStream could not be read'));
    if (api.fleet) findings.push(...checkBmcs(api.fleet.sites, api.fleet.nodes));
    else findings.push(skipped('bmc', 'the API could not list the fleet'));
    findings.push(...(api.fleet ? checkHardwareProfiles(config, api.fleet) : [skipped('hardwareProfiles', 'the API could not list the fleet')]));
    findings.push(...checkMasterKey(config, api.fleet?.secretKeyIds));
    findings.push(...checkClock(clocks, now()));
    const bootstrap = token !== undefined && parseToken(token)?.tokenId === bootstrapTokenId;
    const refused = api.findings.some((f) => f.code === 'API_TOKEN_REFUSED');
    const bootstrapState: BootstrapTokenState = !bootstrap ? 'unknown' : api.fleet ? 'accepted' : refused ? 'refused' : 'unknown';
    findings.push(...checkProduction(config, bootstrapState));
  } finally {
    await Promise.all(connections.map((nc) => nc.close().catch(() => undefined)));
  }
  return reportOf(findings);
}

function reportOf(findings: Finding[]): DoctorReport {
  const order = DoctorCheck.options;
  const sorted = [...findings].sort((a, b) => order.indexOf(a.check) - order.indexOf(b.check));
  const count = (severity: Finding['severity']) => sorted.filter((f) => f.severity === severity).length;
  return { ok: count('error') === 0, counts: { error: count('error'), warning: count('warning'), info: count('info') }, findings: sorted };
}
