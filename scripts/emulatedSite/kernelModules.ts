import { copyFileSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BuildError } from './buildError.ts';
import { runTool } from './hostTools.ts';

const moduleName = (path: string) =>
  basename(path)
    .replace(/\.ko(\.xz|\.zst|\.gz)?$/, '')
    .replace(/-/g, '_');

/** The one kernel release under `<root>/lib/modules` of an unpacked linux-image package. */
export function kernelReleaseOf(root: string): string {
  const releases = readdirSync(join(root, 'lib/modules'));
  if (releases.length !== 1) throw new BuildError('BUILD_FAILED', `expected one kernel under ${root}/lib/modules, found ${releases.join(', ') || 'none'}`);
  return releases[0]!;
}

/** `modules.dep` read into module path → the paths it needs, in load order. */
export function parseModulesDep(text: string): Map<string, string[]> {
  const deps = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    deps.set(
      line.slice(0, colon),
      line
        .slice(colon + 1)
        .split(/\s+/)
        .filter(Boolean),
    );
  }
  return deps;
}

/** The module files `wanted` (by name, `-`/`_` alike) and everything they depend on, sorted. */
export function moduleClosure(deps: ReadonlyMap<string, readonly string[]>, wanted: readonly string[]): string[] {
  const byName = new Map([...deps.keys()].map((path) => [moduleName(path), path]));
  const closure = new Set<string>();
  for (const name of wanted) {
    const path = byName.get(name.replace(/-/g, '_'));
    if (!path) throw new BuildError('BUILD_FAILED', `kernel module ${name} is not in this kernel (built in, or missing?)`);
    closure.add(path);
    for (const dep of deps.get(path) ?? []) closure.add(dep);
  }
  return [...closure].sort();
}

/**
 * Copies `wanted` modules with their dependencies from an unpacked kernel package into `rootfs` and runs `depmod`
 * there, so the image's `modprobe` loads them in dependency order. The package ships no modules.dep (its postinst
 * makes one), so depmod runs on the unpacked package first.
 */
export function installModules(kernelRoot: string, rootfs: string, wanted: readonly string[]): { release: string; modules: string[] } {
  const release = kernelReleaseOf(kernelRoot);
  runTool('depmod', ['-b', kernelRoot, release]);
  const from = join(kernelRoot, 'lib/modules', release);
  const to = join(rootfs, 'lib/modules', release);
  const modules = moduleClosure(parseModulesDep(readFileSync(join(from, 'modules.dep'), 'utf8')), wanted);
  for (const path of modules) {
    mkdirSync(dirname(join(to, path)), { recursive: true });
    copyFileSync(join(from, path), join(to, path));
  }
  for (const file of ['modules.order', 'modules.builtin', 'modules.builtin.modinfo']) copyFileSync(join(from, file), join(to, file));
  runTool('depmod', ['-b', rootfs, release]);
  return { release, modules: modules.map(moduleName) };
}
