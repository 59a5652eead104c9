import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { readTar } from '../../schemas/fleet/bundleTar.ts';
import { BUNDLE_MANIFEST } from '../../schemas/fleet/moduleBundle.ts';
import type { ModuleVersionView, ModuleView } from '../../schemas/fleet/views.ts';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';
import { CliError } from './cliError.ts';
import { packModuleFolder, signerOf } from './modulePack.ts';

type Output = (value: unknown, human: () => string) => void;

/** The module and version a bundle's manifest names (the control plane verifies the rest when it publishes). */
function nameOf(bytes: Uint8Array): { name: string; version: string } {
  try {
    const manifest = readTar(bytes).find((e) => e.path === BUNDLE_MANIFEST);
    const { name, version } = JSON.parse(new TextDecoder().decode(manifest!.data)) as { name: unknown; version: unknown };
    if (typeof name === 'string' && typeof version === 'string') return { name, version };
  } catch {
    // reported below
  }
  throw new CliError('BUNDLE_MALFORMED', `not a module bundle (docs/modules.md): no ${BUNDLE_MANIFEST} naming a module and version`);
}

/** `modules pack|publish`: builds and signs a module bundle from a folder, uploads and publishes one (docs/modules.md). */
export function addModuleCommands(program: Command, api: () => ApiClient, print: Output): void {
  const modules = program.command('modules').description('modules: versioned, signed bundles of files for deployed hosts');
  modules
    .command('pack <folder>')
    .description('build the signed bundle of <folder> (module.json and files/)')
    .requiredOption('--key <file>', "the publisher's Ed25519 private key (PEM)")
    .requiredOption('--publisher <id>', 'the publisher id the key is registered under (pki.registerPublisher)')
    .option('--out <file>', 'where to write the bundle (default <name>-<version>.bundle.tar)')
    .action((folder: string, o: { key: string; publisher: string; out?: string }) => {
      const { bytes, source } = packModuleFolder(folder, signerOf(o.publisher, readFileSync(o.key)));
      const out = o.out ?? `${source.name}-${source.version}.bundle.tar`;
      writeFileSync(out, bytes);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      print(
        { module: source.name, version: source.version, file: out, sha256, size: bytes.byteLength },
        () => `${source.name} ${source.version} → ${out} (sha256 ${sha256})`,
      );
    });
  modules
    .command('publish <bundle>')
    .description('upload a bundle to the blob store and publish it as the version its signed manifest names')
    .action(async (file: string) => {
      const bytes = readFileSync(file);
      const { name, version } = nameOf(bytes);
      const stored = await api().call<{ sha256: string }>('PUT', '/v1/modules/bundles', new Uint8Array(bytes));
      const published = await api().call<{ manifestSha256: string; seq: number }>('POST', `/v1/modules/${encodeURIComponent(name)}/versions`, {
        version,
        bundleSha256: stored.sha256,
      });
      print({ module: name, version, bundleSha256: stored.sha256, ...published }, () => `published ${name} ${version} (manifest ${published.manifestSha256})`);
    });
  modules
    .command('ls')
    .description('modules, with their number of versions and the one published last')
    .action(async () => {
      const page = await api().get<{ items: ModuleView[] }>('/v1/modules');
      print(page, () => table(page.items, ['name', 'versionCount', 'lastVersion', 'lastPublishedAt']));
    });
  modules
    .command('show <module>')
    .description('one module: its versions, manifests digests and publishers')
    .action(async (name: string) => {
      const m = await api().get<ModuleView & { versions: ModuleVersionView[] }>(`/v1/modules/${encodeURIComponent(name)}`);
      const rows = m.versions.map((v) => ({
        ...v,
        provides: v.manifest.provides.join(','),
        reboot: v.manifest.rebootRequired ? 'yes' : 'no',
        files: v.manifest.files.length,
      }));
      print(
        m,
        () =>
          `${m.name}: ${m.versionCount} version(s)\n${table(rows, ['version', 'publisherId', 'manifestSha256', 'files', 'provides', 'reboot', 'publishedAt'])}`,
      );
    });
}
