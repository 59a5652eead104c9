import { BuildError } from './buildError.ts';
import { fetchDeb, isFetchable, type CachedDeb } from './debianPackages.ts';
import { runTool } from './hostTools.ts';

/** One `Depends:` entry: alternatives, any one of which satisfies it (`a | b`), by package name only. */
export type DependencyGroup = readonly string[];

/**
 * `Pre-Depends` and `Depends` fields of a control file parsed into groups of alternatives, with version constraints
 * and architecture qualifiers (`python3:any`, `(>= 3.11)`, `[amd64]`) dropped: the closure takes apt's candidates.
 */
export function parseDepends(...fields: readonly string[]): DependencyGroup[] {
  return fields
    .flatMap((field) => field.split(','))
    .map((group) =>
      group
        .split('|')
        .map((alt) =>
          alt
            .replace(/\(.*?\)|\[.*?\]|<.*?>/g, '')
            .trim()
            .replace(/:\w+$/, ''),
        )
        .filter(Boolean),
    )
    .filter((group) => group.length > 0);
}

const control = (deb: CachedDeb, name: string) => runTool('dpkg-deb', ['-f', deb.file, name]).toString('utf8').trim();

/** The packages that provide a virtual package (`apt-cache showpkg`'s "Reverse Provides"), in apt's order. */
function providersOf(name: string): string[] {
  let out: string;
  try {
    out = runTool('apt-cache', ['showpkg', name]).toString('utf8');
  } catch {
    return [];
  }
  const section = out.split(/^Reverse Provides:\s*$/m)[1] ?? '';
  return section
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

/** What one group resolves to: a name already chosen or stood in for, else the first real alternative, else a provider. */
function pickAlternative(group: DependencyGroup, have: (name: string) => boolean, cacheDir: string): string | undefined {
  if (group.some(have)) return undefined;
  const real = group.find((name) => isFetchable(name, cacheDir));
  if (real) return real;
  const provided = group.flatMap(providersOf);
  if (provided.some(have)) return undefined;
  const provider = provided.find((name) => isFetchable(name, cacheDir));
  if (!provider) throw new BuildError('PACKAGE_UNAVAILABLE', `no package satisfies the dependency ${group.join(' | ')}`);
  return provider;
}

/**
 * The Debian packages `roots` need to run, as dpkg would install them without recommends: every `Pre-Depends` and
 * `Depends` followed from the downloaded packages' own control files, each .deb fetched once into `cacheDir`.
 * `provided` names packages something else in the image stands for (busybox for Debian's essential userland), which
 * are then neither fetched nor followed.
 */
export function dependencyClosure(roots: readonly string[], cacheDir: string, provided: ReadonlySet<string>): CachedDeb[] {
  const chosen = new Map<string, CachedDeb>();
  const queue = [...roots];
  const have = (name: string) => chosen.has(name) || provided.has(name) || queue.includes(name);
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (chosen.has(name) || provided.has(name)) continue;
    const deb = fetchDeb(name, cacheDir);
    chosen.set(name, deb);
    for (const group of parseDepends(control(deb, 'Pre-Depends'), control(deb, 'Depends'))) {
      const next = pickAlternative(group, have, cacheDir);
      if (next) queue.push(next);
    }
  }
  return [...chosen.values()].sort((a, b) => a.name.localeCompare(b.name));
}
