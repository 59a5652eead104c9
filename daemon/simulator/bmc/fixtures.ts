import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The mockup trees shipped in the shared fixtures folder (see its README). */
export const RedfishTrees = ['dmtf-public-tower', 'hpe-ilo5-dl325'] as const;
export type RedfishTreeName = (typeof RedfishTrees)[number];

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The fixtures live outside the repo (read-only, shared between checkouts), so they are referenced by path
 * and never copied in. `BC_REDFISH_FIXTURES` lets CI point at another copy.
 */
export function redfishFixturesRoot(): string {
  return process.env.BC_REDFISH_FIXTURES ?? resolve(repoRoot, '../shared/fixtures/redfish');
}

export function redfishTreePath(tree: RedfishTreeName | string): string {
  const path = resolve(redfishFixturesRoot(), tree);
  if (!existsSync(resolve(path, 'index.json'))) {
    throw new Error(`Redfish mockup tree not found at ${path} (set BC_REDFISH_FIXTURES to the fixtures folder)`);
  }
  return path;
}
