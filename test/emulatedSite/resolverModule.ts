import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModuleSource } from '../../schemas/fleet/moduleManifest.ts';
import { runCli } from '../support/cliRunner.ts';

export const MODULE = 'resolver';
/** Where the host image's `bcd node` keeps its modules (`--state /var/lib/bcd`, scripts/emulatedSite/rootfs/image-init.sh). */
export const MODULES_ON_HOST = `/var/lib/bcd/modules/${MODULE}`;

/**
 * `bin/resolver` of a version: it serves the zone file its version ships beside it (`share/resolver.zone`), found
 * through its own path (PATH reaches it through the module's `current` link), and fails when that file is missing.
 */
const resolverScript = (version: string) => `#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
zone="$here/../share/resolver.zone"
[ -f "$zone" ] || { echo "resolver ${version}: no zone file at $zone" >&2; exit 1; }
echo "resolver ${version} serving $(cat "$zone")"
`;

/**
 * A publisher's key file and the module's versions as an author keeps them: one folder each (`module.json` and
 * `files/`), packed into signed bundles by `better-compute modules pack`. `broken`: the version ships no zone file,
 * so its probe (which runs the installed `resolver` through PATH) exits non-zero on the host.
 */
export function resolverAuthor(work: string, api: string, dataDir: string, token: string, publisherId = 'emu-e2e') {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keyFile = join(work, `${publisherId}.pem`);
  mkdirSync(work, { recursive: true });
  writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const cli = async (...args: string[]) => {
    const outcome = await runCli(api, dataDir, args, token);
    if (outcome.code !== 0) throw new Error(`better-compute ${args.join(' ')} exited ${outcome.code}: ${outcome.stderr}`);
    return outcome.stdout;
  };
  /** Packs `version` with the publisher's key and publishes it (`modules pack`, then `modules publish`). */
  const publish = async (version: string, { broken = false } = {}) => {
    const folder = join(work, `${MODULE}-${version}`);
    mkdirSync(join(folder, 'files', 'bin'), { recursive: true });
    const source: ModuleSource = {
      name: MODULE,
      version,
      provides: ['dns'],
      requires: [],
      exclusive: ['dns'],
      rebootRequired: false,
      probes: [{ name: 'serves-zone', command: 'resolver', shell: 'login' }],
    };
    writeFileSync(join(folder, 'module.json'), JSON.stringify(source));
    writeFileSync(join(folder, 'files', 'bin', 'resolver'), resolverScript(version), { mode: 0o755 });
    if (!broken) {
      mkdirSync(join(folder, 'files', 'share'), { recursive: true });
      writeFileSync(join(folder, 'files', 'share', 'resolver.zone'), `zone of ${version}\n`, { mode: 0o644 });
    }
    const bundle = join(work, `${MODULE}-${version}.bundle.tar`);
    await cli('modules', 'pack', folder, '--key', keyFile, '--publisher', publisherId, '--out', bundle);
    return cli('modules', 'publish', bundle);
  };
  return {
    publisherId,
    publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
    publish,
    cli,
  };
}
