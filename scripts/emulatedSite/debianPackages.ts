import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BuildError } from './buildError.ts';
import { runTool } from './hostTools.ts';

/** A downloaded Debian package: the exact version, and the .deb file in the cache. */
export interface CachedDeb {
  name: string;
  version: string;
  file: string;
}

const field = (deb: string, name: string) => runTool('dpkg-deb', ['-f', deb, name]).toString('utf8').trim();

function cachedCopies(cacheDir: string, name: string): CachedDeb[] {
  if (!existsSync(cacheDir)) return [];
  return readdirSync(cacheDir)
    .filter((file) => file.startsWith(`${name}_`) && file.endsWith('.deb'))
    .map((file) => join(cacheDir, file))
    .filter((file) => field(file, 'Package') === name)
    .map((file) => ({ name, version: field(file, 'Version'), file }));
}

/** The version apt would install now (from the local package lists; no network), or undefined when apt has none. */
export function candidateVersion(name: string): string | undefined {
  let out: string;
  try {
    out = runTool('apt-cache', ['policy', name]).toString('utf8');
  } catch {
    return undefined;
  }
  const candidate = /Candidate:\s*(\S+)/.exec(out)?.[1];
  return candidate && candidate !== '(none)' ? candidate : undefined;
}

/** Whether `name` is a real package apt can fetch, or one the cache holds (for offline rebuilds). */
export function isFetchable(name: string, cacheDir: string): boolean {
  return candidateVersion(name) !== undefined || cachedCopies(cacheDir, name).length > 0;
}

/**
 * The package a meta-package stands for (e.g. `linux-image-cloud-amd64` → `linux-image-6.1.0-57-cloud-amd64`), by
 * its first `Depends:` in the local lists; `fallbackPattern` matches a cached package when the lists know none.
 */
export function resolveMetaPackage(meta: string, cacheDir: string, fallbackPattern: RegExp): string {
  try {
    const out = runTool('apt-cache', ['depends', '--no-recommends', '--no-suggests', meta]).toString('utf8');
    const dep = /^\s*Depends:\s*(\S+)/m.exec(out)?.[1];
    if (dep) return dep;
  } catch {
    // No lists (apt-get update never ran): fall back to what the cache holds.
  }
  const cached = existsSync(cacheDir)
    ? readdirSync(cacheDir)
        .map((file) => file.split('_')[0]!)
        .filter((n) => fallbackPattern.test(n))
        .sort()
    : [];
  const newest = cached.at(-1);
  if (!newest) throw new BuildError('PACKAGE_UNAVAILABLE', `${meta} does not resolve (run apt-get update) and no cached package matches`);
  return newest;
}

/**
 * The .deb of `name` at apt's candidate version, downloaded once into `cacheDir` (`apt-get download`, which checks
 * the archive's signed hashes) and reused afterwards, so a rebuild is offline. Without package lists the newest
 * cached copy is used.
 */
export function fetchDeb(name: string, cacheDir: string): CachedDeb {
  mkdirSync(cacheDir, { recursive: true });
  const version = candidateVersion(name);
  const cached = cachedCopies(cacheDir, name);
  if (version === undefined) {
    const newest = cached.sort((a, b) => a.version.localeCompare(b.version)).at(-1);
    if (!newest) throw new BuildError('PACKAGE_UNAVAILABLE', `apt knows no version of ${name} (run apt-get update) and none is cached`);
    return newest;
  }
  const hit = cached.find((deb) => deb.version === version);
  if (hit) return hit;
  // Downloaded into a private folder first so a cut-off download never sits in the cache under a good name.
  const staging = join(cacheDir, `.download-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o777 });
  try {
    runTool('apt-get', ['download', '-q', `${name}=${version}`], { cwd: staging });
    const [file] = readdirSync(staging).filter((f) => f.endsWith('.deb'));
    if (!file) throw new BuildError('PACKAGE_UNAVAILABLE', `apt-get download ${name}=${version} produced no .deb`);
    renameSync(join(staging, file), join(cacheDir, file));
    return { name, version, file: join(cacheDir, file) };
  } catch (err) {
    if (err instanceof BuildError && err.code === 'BUILD_FAILED') {
      throw new BuildError('PACKAGE_UNAVAILABLE', `could not download ${name}=${version}: ${err.message}`, { cause: err });
    }
    throw err;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Unpacks a .deb's files (not its scripts) into `into`, as `dpkg-deb -x` does. */
export function extractDeb(deb: CachedDeb, into: string): void {
  mkdirSync(into, { recursive: true });
  runTool('dpkg-deb', ['-x', deb.file, into]);
}
