import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ModuleManifest } from '../../../schemas/fleet/moduleManifest.ts';
import { syncFolder } from '../../agent/durableFile.ts';

/** A difference between a version's folder and its manifest. */
export interface ModuleDrift {
  readonly path: string;
  readonly problem: 'changed' | 'mode' | 'missing' | 'unexpected';
}

// O_NOFOLLOW: a link planted where a file goes makes the open fail instead of writing through it; O_EXCL: nothing
// already there is reused.
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Writes a verified version's files into a fresh folder `<parent>/.tmp-<random>` (each file fsynced with the manifest's
 * mode, then every folder it made) and returns it, for the caller to rename into place. Paths come from a manifest
 * the verifier accepted: relative, without `.`/`..` segments, so each lands inside the folder.
 */
export async function unpackToTemp(parent: string, manifest: ModuleManifest, files: ReadonlyMap<string, Uint8Array>): Promise<string> {
  const tmp = join(parent, `.tmp-${randomBytes(8).toString('hex')}`);
  await mkdir(tmp, { mode: 0o755 });
  const folders = new Set<string>([tmp]);
  try {
    for (const file of manifest.files) {
      const target = join(tmp, file.path);
      for (let dir = dirname(target); !folders.has(dir); dir = dirname(dir)) folders.add(dir);
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      const handle = await open(target, CREATE_FLAGS, file.mode);
      try {
        await handle.writeFile(files.get(file.path)!);
        // The umask may have taken bits off the mode open() was given.
        await handle.chmod(file.mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    for (const dir of [...folders].sort((a, b) => b.length - a.length)) syncFolder(dir);
    return tmp;
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

async function sha256Of(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/**
 * Compares a version's folder with its manifest, never following a link: a listed file that is not a regular file
 * (a link, a folder) is `changed`, anything unlisted (a file, a link, an empty folder) is `unexpected`.
 */
export async function driftOf(folder: string, manifest: ModuleManifest): Promise<ModuleDrift[]> {
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  const needed = new Set(
    manifest.files.flatMap((f) =>
      f.path
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  const drift: ModuleDrift[] = [];
  const seen = new Set<string>();
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(join(folder, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const file = listed.get(path);
      if (entry.isDirectory() && needed.has(path)) {
        await walk(path);
      } else if (file === undefined) {
        drift.push({ path, problem: 'unexpected' });
      } else if (!entry.isFile()) {
        seen.add(path);
        drift.push({ path, problem: 'changed' });
      } else {
        seen.add(path);
        const stat = await lstat(join(folder, path));
        if ((await sha256Of(join(folder, path))) !== file.sha256) drift.push({ path, problem: 'changed' });
        else if ((stat.mode & 0o7777) !== file.mode) drift.push({ path, problem: 'mode' });
      }
    }
  };
  await walk('');
  for (const f of manifest.files) if (!seen.has(f.path)) drift.push({ path: f.path, problem: 'missing' });
  return drift.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Removes a folder in two steps, a rename then the delete, so a crash leaves either the whole folder or trash. */
export async function removeFolder(folder: string): Promise<void> {
  const trash = join(dirname(folder), `.trash-${randomBytes(8).toString('hex')}`);
  try {
    await rename(folder, trash);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  syncFolder(dirname(folder));
  await rm(trash, { recursive: true, force: true });
}

/** Deletes what an interrupted unpack or removal left in a module's folder. */
export async function clearLeftovers(moduleFolder: string): Promise<void> {
  const entries = await readdir(moduleFolder).catch(() => [] as string[]);
  for (const name of entries) if (name.startsWith('.tmp-') || name.startsWith('.trash-')) await rm(join(moduleFolder, name), { recursive: true, force: true });
}
