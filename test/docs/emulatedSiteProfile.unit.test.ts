import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMULATED_HARDWARE_PROFILE } from '../../scripts/emulatedSite/stackSite.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { repoRoot } from '../../services/platform/repoRoot.ts';
import { tempDir } from '../support/natsServer.ts';

const exampleFile = 'examples/emulated-site/better-compute.config.ts';

describe('the emulated site hardware profile', () => {
  it('is declared by the example config exactly as docs/walkthroughs.md shows it, and is what site:emulated enrols', () => {
    const page = readFileSync(join(repoRoot, 'docs/walkthroughs.md'), 'utf8');
    const shown = /## The emulated site's hardware profile[\s\S]*?```ts\n([\s\S]*?)```/.exec(page)?.[1];
    expect(shown).toBeDefined();
    expect(readFileSync(join(repoRoot, exampleFile), 'utf8')).toContain(shown!);
    using dir = tempDir();
    const config = loadConfig({ BC_DATA_DIR: dir.path, BC_CONFIG: join(repoRoot, exampleFile) });
    expect(Object.keys(config.hardwareProfiles)).toEqual([EMULATED_HARDWARE_PROFILE]);
    expect(config.hardwareProfiles[EMULATED_HARDWARE_PROFILE]?.drivers).toEqual({
      power: 'redfish',
      management: 'redfish',
      boot: 'ipxe',
      deploy: 'image-stream',
    });
  });
});
