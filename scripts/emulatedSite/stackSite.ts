import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StackRecord } from '../../services/platform/stackRecord.ts';
import { EMULATED_BMC, startEmulatedSite, type EmulatedSite, type EmulatedSiteOptions } from './emulatedSite.ts';
import { startTcpRelay, type TcpRelay } from './tcpRelay.ts';

/** Whom the site is started against: the running stack (`<BC_DATA_DIR>/stack.json`) and an admin token of it. */
export interface StackAccess {
  record: Pick<StackRecord, 'apiUrl' | 'natsUrl' | 'natsAuth'>;
  adminToken: string;
}

/** An emulated site joined to a stack, with the NATS relay its machines reach the stack through. */
export interface StackSite {
  site: EmulatedSite;
  /** NATS as the site and its machines reach it: the relay on the host end of the uplink. */
  natsUrl: string;
  stop(): Promise<void>;
}

export class StackSiteError extends Error {
  override name = 'StackSiteError';
  readonly code = 'EMULATED_SITE_JOIN_FAILED';
}

/** The stack's HTTP API with the admin token: status and parsed body (null when there is none). */
export function stackApi(stack: StackAccess) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${stack.record.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
}

/**
 * What `npm run site:emulated` does against the stack `npm start` runs, for it and for the tests and benches that take
 * the same path: relays the stack's NATS (on loopback) to `<uplink host>:<natsRelayPort>`, creates the site (an
 * existing one is kept), mints a single-use site join token, fetches the public join credential when the stack runs
 * broker auth (operator mode), and starts the emulated site with `bcd site` joining on them.
 */
export async function startSiteOnStack(
  stack: StackAccess,
  options: Omit<EmulatedSiteOptions, 'natsUrl' | 'siteJoinToken' | 'siteJoinCreds'> & { natsRelayPort: number },
): Promise<StackSite> {
  const api = stackApi(stack);
  const upstream = new URL(stack.record.natsUrl);
  const relay: TcpRelay = await startTcpRelay({
    listen: { host: options.net.hostIp, port: options.natsRelayPort },
    target: { host: upstream.hostname, port: Number(upstream.port || 4222) },
  });
  try {
    const created = await api('POST', '/v1/commands/site.create', { siteId: options.siteId, name: `Emulated site ${options.siteId}` });
    if (created.status !== 201 && created.status !== 409) throw new StackSiteError(`site.create answered ${created.status}: ${JSON.stringify(created.body)}`);
    const minted = await api('POST', '/v1/join-tokens', { role: 'site', siteId: options.siteId });
    if (minted.status !== 201) throw new StackSiteError(`minting the site token answered ${minted.status}: ${JSON.stringify(minted.body)}`);
    let siteJoinCreds: string | undefined;
    if (stack.record.natsAuth === 'operator') {
      const creds = await fetch(`${stack.record.apiUrl}/v1/join-creds`);
      if (!creds.ok) throw new StackSiteError(`the stack serves no join credential (${creds.status})`);
      mkdirSync(options.runDir, { recursive: true });
      siteJoinCreds = join(options.runDir, 'join.creds');
      writeFileSync(siteJoinCreds, await creds.text(), { mode: 0o600 });
    }
    const natsUrl = `nats://${options.net.hostIp}:${options.natsRelayPort}`;
    const site = await startEmulatedSite({
      ...options,
      natsUrl,
      siteJoinToken: (minted.body as { token: string }).token,
      ...(siteJoinCreds ? { siteJoinCreds } : {}),
    });
    return {
      site,
      natsUrl,
      stop: async () => {
        await site.stop();
        await relay.close();
      },
    };
  } catch (err) {
    await relay.close();
    throw err;
  }
}

/**
 * The hardware profile the VMs enrol as, declared by `examples/emulated-site/better-compute.config.ts`: the stack
 * must run with that config (`BC_CONFIG=examples/emulated-site/better-compute.config.ts npm start`).
 */
export const EMULATED_HARDWARE_PROFILE = 'emulated-redfish';

/**
 * Enrols each VM of the site as a node (`metal.enroll` with its BMC address and MAC); throws on any refusal.
 * `inspectInBand`: the first inspection also boots the ramdisk and looks from inside (`hardware.probe`).
 */
export async function enrolEmulatedMachines(stack: StackAccess, site: EmulatedSite, siteId: string, options: { inspectInBand?: boolean } = {}): Promise<void> {
  const api = stackApi(stack);
  for (const vm of site.machines) {
    const enrolled = await api('POST', '/v1/commands/metal.enroll', {
      nodeId: vm.id,
      siteId,
      bmc: { address: vm.bmcAddress, credentialsRef: EMULATED_BMC.credentialsRef },
      hardwareProfile: EMULATED_HARDWARE_PROFILE,
      macs: [vm.mac],
      ...(options.inspectInBand ? { inspectInBand: true } : {}),
    });
    if (enrolled.status !== 201) {
      const hint =
        (enrolled.body as { code?: string } | undefined)?.code === 'HARDWARE_PROFILE_UNKNOWN'
          ? ' (start the stack with BC_CONFIG=examples/emulated-site/better-compute.config.ts, which declares the profile)'
          : '';
      throw new StackSiteError(`enrolling ${vm.id} answered ${enrolled.status}: ${JSON.stringify(enrolled.body)}${hint}`);
    }
  }
}
