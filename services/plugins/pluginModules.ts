import { register } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PluginDefinition } from '../../plugins/sdk/definePlugin.ts';

let loader: Promise<void> | undefined;

/**
 * A plugin written in TypeScript, loaded by a process running compiled (`npm run build`): tsx's loader is registered
 * for it then, once, and after it the hook that hands the plugin the product's compiled modules rather than their
 * sources (`compiledProduct.ts`). From sources the process already runs under tsx.
 */
function typeScriptLoader(): Promise<void> {
  if (!import.meta.url.endsWith('.js')) return Promise.resolve();
  loader ??= import('tsx/esm/api').then(({ register: registerTsx }) => {
    registerTsx();
    register(new URL('./compiledProduct.js', import.meta.url));
  });
  return loader;
}

/** The plugin a module exports: `default`, `plugin`, or its only export that looks like one. */
export function pluginOf(module: Record<string, unknown>, path: string): PluginDefinition {
  const isPlugin = (v: unknown): v is PluginDefinition => typeof v === 'object' && v !== null && 'id' in v && 'steps' in v && 'version' in v;
  const candidates = [module.default, module.plugin, ...Object.values(module)].filter(isPlugin);
  if (candidates.length === 0) throw new Error(`${path} exports no plugin (definePlugin(...) as default or as "plugin")`);
  return candidates[0]!;
}

/**
 * Imports each module (a path relative to the working directory, or absolute) and picks its plugin export, in the
 * order given. A module that cannot be imported or exports no plugin fails the whole load: a deployment that names a
 * plugin must not start without it.
 */
export async function loadPluginModules(paths: readonly string[]): Promise<PluginDefinition[]> {
  const plugins: PluginDefinition[] = [];
  for (const modulePath of paths) {
    const path = isAbsolute(modulePath) ? modulePath : resolve(process.cwd(), modulePath);
    if (/\.[mc]?ts$/.test(path)) await typeScriptLoader();
    plugins.push(pluginOf((await import(pathToFileURL(path).href)) as Record<string, unknown>, path));
  }
  return plugins;
}
