import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyModuleBundle } from '../../schemas/fleet/moduleBundle.ts';
import { packModuleFolder, signerOf } from '../../scripts/cli/modulePack.ts';
import { source } from './bundleFixture.ts';

const folders: string[] = [];
afterEach(() => {
  for (const f of folders.splice(0)) rmSync(f, { recursive: true, force: true });
});

function moduleFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'bc-module-'));
  folders.push(folder);
  writeFileSync(join(folder, 'module.json'), JSON.stringify(source({ name: 'chrony', version: '4.5.0' }), null, 2));
  mkdirSync(join(folder, 'files', 'bin'), { recursive: true });
  writeFileSync(join(folder, 'files', 'bin', 'chronyd'), '#!/bin/sh\nexec sleep infinity\n');
  chmodSync(join(folder, 'files', 'bin', 'chronyd'), 0o750);
  writeFileSync(join(folder, 'files', 'chrony.conf'), 'pool pool.ntp.org iburst\n');
  chmodSync(join(folder, 'files', 'chrony.conf'), 0o640);
  return folder;
}

const pem = () => generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' });

describe('modules pack', () => {
  it('packs a folder into a bundle that verifies against the key it was signed with, files and modes as on disk', () => {
    const signer = signerOf('acme', pem());
    const { bytes } = packModuleFolder(moduleFolder(), signer);
    const verdict = verifyModuleBundle(bytes, [{ publisherId: 'acme', publicKey: signer.publicKey }]);
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.manifest).toMatchObject({ name: 'chrony', version: '4.5.0' });
    expect(verdict.manifest.files.map((f) => [f.path, f.mode])).toEqual([
      ['bin/chronyd', 0o750],
      ['chrony.conf', 0o640],
    ]);
    expect(new TextDecoder().decode(verdict.files.get('chrony.conf'))).toBe('pool pool.ntp.org iburst\n');
    // The same folder and key give the same bytes.
    const folder = moduleFolder();
    expect(Buffer.from(packModuleFolder(folder, signer).bytes).equals(Buffer.from(packModuleFolder(folder, signer).bytes))).toBe(true);
  });

  it('refuses a folder with a link, without files, or with an invalid module.json, and a key that is not Ed25519', () => {
    const signer = signerOf('acme', pem());
    const linked = moduleFolder();
    symlinkSync('/etc/passwd', join(linked, 'files', 'passwd'));
    expect(() => packModuleFolder(linked, signer)).toThrowError(expect.objectContaining({ code: 'MODULE_FOLDER_INVALID' }) as never);
    const empty = moduleFolder();
    rmSync(join(empty, 'files'), { recursive: true });
    expect(() => packModuleFolder(empty, signer)).toThrowError(/holds no file/);
    const badSource = moduleFolder();
    writeFileSync(join(badSource, 'module.json'), JSON.stringify({ ...source(), version: 'latest' }));
    expect(() => packModuleFolder(badSource, signer)).toThrowError(/version/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' });
    expect(() => signerOf('acme', rsa)).toThrowError(expect.objectContaining({ code: 'KEY_INVALID' }) as never);
  });
});
