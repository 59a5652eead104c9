import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildModuleBundle, type ManifestSigner, type ModuleFileInput } from '../../schemas/fleet/buildModuleBundle.ts';
import { ModuleSource } from '../../schemas/fleet/moduleManifest.ts';
import { PublisherId } from '../../schemas/fleet/publishers.ts';
import { CliError } from './cliError.ts';

/** The files under `root`, by path relative to it; a link or anything but a regular file or folder is refused. */
function filesUnder(root: string, prefix = ''): ModuleFileInput[] {
  const found: ModuleFileInput[] = [];
  for (const name of readdirSync(join(root, prefix)).sort()) {
    const path = prefix ? `${prefix}/${name}` : name;
    const stat = lstatSync(join(root, path));
    if (stat.isSymbolicLink()) throw new CliError('MODULE_FOLDER_INVALID', `files/${path} is a link: a bundle holds regular files only`);
    if (stat.isDirectory()) found.push(...filesUnder(root, path));
    else if (stat.isFile()) found.push({ path, mode: stat.mode & 0o777, data: readFileSync(join(root, path)) });
    else throw new CliError('MODULE_FOLDER_INVALID', `files/${path} is not a regular file or folder`);
  }
  return found;
}

/** The signer of an Ed25519 private key (PEM, as `openssl genpkey -algorithm ed25519` writes it: the approver keys' format). */
export function signerOf(publisherId: string, keyPem: string | Buffer): ManifestSigner {
  if (!PublisherId.safeParse(publisherId).success) throw new CliError('MODULE_FOLDER_INVALID', `publisher id ${JSON.stringify(publisherId)} is not an id`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(keyPem);
  } catch {
    throw new CliError('KEY_INVALID', 'the key file is not a PEM private key');
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new CliError('KEY_INVALID', `the key is ${privateKey.asymmetricKeyType ?? 'unknown'}, not Ed25519`);
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x!;
  return { publisherId, publicKey: Buffer.from(x, 'base64url').toString('base64'), sign: (message) => sign(null, message, privateKey) };
}

/**
 * `modules pack`: the signed bundle of the module in `folder` (`module.json`, the manifest without files, and
 * `files/`, the files to ship). Files are listed, hashed and given their permission bits here (docs/modules.md).
 */
export function packModuleFolder(folder: string, signer: ManifestSigner): { bytes: Uint8Array; source: ModuleSource } {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(folder, 'module.json'), 'utf8'));
  } catch (err) {
    throw new CliError('MODULE_FOLDER_INVALID', `${join(folder, 'module.json')}: ${(err as Error).message}`);
  }
  const source = ModuleSource.safeParse(raw);
  if (!source.success) {
    const issues = source.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new CliError('MODULE_FOLDER_INVALID', `module.json is not a module source: ${issues}`);
  }
  const filesRoot = join(folder, 'files');
  let files: ModuleFileInput[] = [];
  try {
    if (lstatSync(filesRoot).isDirectory()) files = filesUnder(filesRoot);
  } catch (err) {
    if (err instanceof CliError) throw err;
  }
  if (files.length === 0) throw new CliError('MODULE_FOLDER_INVALID', `${filesRoot} holds no file: a module ships at least one`);
  try {
    return { bytes: buildModuleBundle(source.data, files, signer), source: source.data };
  } catch (err) {
    throw new CliError('MODULE_FOLDER_INVALID', `the files do not make a manifest: ${(err as Error).message}`);
  }
}
