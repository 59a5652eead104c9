import { afterEach } from 'vitest';

import { createRedfishClient, type RedfishClient, type RedfishClientOptions } from '../../daemon/redfish/index.ts';
import { startBmcSimulator, type BmcSimulator, type BmcSimulatorOptions, type RedfishTreeName } from '../../daemon/simulator/bmc/index.ts';

export const USER = 'bc-admin';
export const PASSWORD = 'sim-Pa55word!';

/**
 * Per-tree facts, read by hand from the fixture JSON (not computed from it, so the client is really checked). Every
 * per-tree test runs on these two trees; the AMI, Intel and OpenBMC captures lack parts of them (RAID, media, NICs) and
 * have their own tests.
 */
export interface TreeFacts {
  tree: Extract<RedfishTreeName, 'dmtf-public-tower' | 'hpe-ilo5-dl325'>;
  systemUri: string;
  resetUri: string;
  cdMediaUri: string;
  biosSettingsUri: string;
  /** A BIOS attribute, its current value, and a different valid value of the same type. */
  biosAttribute: { name: string; current: string; next: string };
  supportsUefiHttp: boolean;
  hasVolumes: boolean;
  /** How the tree lets a client mount media: declared actions, or PATCH only. */
  mediaBy: 'actions' | 'patch';
}

export const trees: TreeFacts[] = [
  {
    tree: 'dmtf-public-tower',
    systemUri: '/redfish/v1/Systems/437XR1238R2',
    resetUri: '/redfish/v1/Systems/437XR1238R2/Actions/ComputerSystem.Reset',
    cdMediaUri: '/redfish/v1/Managers/BMC/VirtualMedia/CD1',
    biosSettingsUri: '/redfish/v1/Systems/437XR1238R2/Bios/Settings',
    biosAttribute: { name: 'ProcTurboMode', current: 'Enabled', next: 'Disabled' },
    supportsUefiHttp: false,
    hasVolumes: true,
    mediaBy: 'patch',
  },
  {
    tree: 'hpe-ilo5-dl325',
    systemUri: '/redfish/v1/Systems/1',
    resetUri: '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset',
    cdMediaUri: '/redfish/v1/Managers/1/VirtualMedia/2',
    biosSettingsUri: '/redfish/v1/systems/1/bios/settings/',
    biosAttribute: { name: 'WorkloadProfile', current: 'GeneralPowerEfficientCompute', next: 'Virtualization-MaxPerformance' },
    supportsUefiHttp: true,
    hasVolumes: false,
    mediaBy: 'actions',
  },
];

const running: { sim: BmcSimulator; clients: RedfishClient[] }[] = [];

afterEach(async () => {
  for (const { sim, clients } of running.splice(0)) {
    await Promise.all(clients.map((c) => c.close()));
    await sim.close();
  }
});

/** A simulator stopped after the test, with the shared test credentials. */
export async function simulate(tree: RedfishTreeName, options: Partial<BmcSimulatorOptions> = {}): Promise<BmcSimulator> {
  const sim = await startBmcSimulator({ tree, username: USER, password: PASSWORD, ...options });
  running.push({ sim, clients: [] });
  return sim;
}

/** A client with short polls so delays of tens of milliseconds settle quickly. */
export function clientFor(sim: BmcSimulator, options: Partial<RedfishClientOptions> = {}): RedfishClient {
  const client = createRedfishClient({
    baseUrl: sim.url,
    username: USER,
    password: PASSWORD,
    auth: 'basic',
    timeoutMs: 3_000,
    ...options,
    // Test timings override these one by one.
    timing: {
      pollIntervalMs: 5,
      powerTimeoutMs: 3_000,
      mediaTimeoutMs: 3_000,
      taskTimeoutMs: 5_000,
      resetObserveMs: 500,
      bootVerifyMs: 500,
      updateVerifyMs: 300,
      ...options.timing,
    },
  });
  running.find((r) => r.sim === sim)?.clients.push(client);
  return client;
}

/** Requests in the simulator log matching a method and a case-insensitive path (trailing `/` ignored). */
export function requestsTo(sim: BmcSimulator, method: string, path: string) {
  const norm = (p: string): string => p.replace(/\/+$/, '').toLowerCase();
  return sim.requestLog.filter((r) => r.method === method && norm(r.path) === norm(path));
}

export function writes(sim: BmcSimulator) {
  return sim.requestLog.filter((r) => r.method !== 'GET');
}

/** Resolves with the rejection so tests can assert on the typed error. */
export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
