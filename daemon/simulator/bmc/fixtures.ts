import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The mockup trees shipped in `daemon/simulator/fixtures/redfish` (sources and licences in its README). */
export const RedfishTrees = ['dmtf-public-tower', 'hpe-ilo5-dl325', 'gigabyte-ami-h262', 'intel-s2600', 'openbmc-stock'] as const;
export type RedfishTreeName = (typeof RedfishTrees)[number];

/**
 * The trees a simulated site builds its machines from: each system lists NICs (the MACs a node is enrolled and PXE-armed
 * by) and a CD slot. The Intel and OpenBMC captures list neither.
 */
export const SiteMachineTrees = ['dmtf-public-tower', 'hpe-ilo5-dl325'] as const satisfies readonly RedfishTreeName[];

const bundledFixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/redfish');

/** Where named trees are looked up: the bundled copy, or `BC_REDFISH_FIXTURES` for another collection. */
export function redfishFixturesRoot(): string {
  return process.env.BC_REDFISH_FIXTURES ?? bundledFixtures;
}

/** A tree by bundled name, or any mockup folder by path (absolute, or relative to the working directory). */
export function redfishTreePath(tree: string): string {
  const path = isAbsolute(tree) || tree.includes('/') ? resolve(tree) : resolve(redfishFixturesRoot(), tree);
  if (!existsSync(resolve(path, 'index.json'))) {
    throw new Error(`Redfish mockup tree not found at ${path} (no index.json: give a DSP2043 mockup folder)`);
  }
  return path;
}
