import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../platform/repoRoot.ts';

/**
 * A module-resolution hook (`module.register`) for a process running compiled that loads a TypeScript plugin through
 * tsx: whatever of the product the plugin imports (`better-compute/sdk` resolves to `plugins/sdk/index.ts`, or a
 * relative path into the tree) is given as its compiled copy under `dist/node`, so plugin and product share one
 * instance of each module and `instanceof ProviderError` still holds across them.
 */
const compiledRoot = `${repoRoot.replace(/\/$/, '')}/dist/node/`;
const sourceRoot = pathToFileURL(`${repoRoot.replace(/\/$/, '')}/`).href;
const productDirs = ['services/', 'schemas/', 'plugins/', 'projections/', 'daemon/'];

type Resolved = { url: string; format?: string | null; shortCircuit?: boolean };

export async function resolve(specifier: string, context: unknown, nextResolve: (specifier: string, context: unknown) => Promise<Resolved>): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith(sourceRoot) || !resolved.url.endsWith('.ts')) return resolved;
  const relative = resolved.url.slice(sourceRoot.length);
  if (!productDirs.some((dir) => relative.startsWith(dir))) return resolved;
  const compiled = `${compiledRoot}${decodeURIComponent(relative).replace(/\.ts$/, '.js')}`;
  return existsSync(compiled) ? { url: pathToFileURL(compiled).href, format: 'module', shortCircuit: true } : resolved;
}
