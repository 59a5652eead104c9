import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, resolve } from 'node:path';
import { ConfigError } from './configError.ts';

/**
 * The typed deployment config `npm start` (and every tool of the stack) reads from its working directory when
 * `BC_CONFIG` is unset: a TypeScript module whose default export is the settings (`defineConfig`). Checked by the
 * compiler as it is written, and by the same zod schema as every other source when it is loaded.
 */
export const CONFIG_MODULE_FILE = 'better-compute.config.ts';

const moduleExtensions = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);

/**
 * Where the settings file is: `BC_CONFIG`; else `better-compute.config.ts` in `cwd`; else `<dataDir>/config.json`;
 * undefined when none of them exists. A `BC_CONFIG` that names no file is an error, never a silent default.
 */
export function configFilePath(env: NodeJS.ProcessEnv, dataDir: string, cwd = process.cwd()): string | undefined {
  if (env.BC_CONFIG !== undefined && env.BC_CONFIG !== '') {
    if (!existsSync(env.BC_CONFIG)) throw new ConfigError('CONFIG_FILE_MISSING', `BC_CONFIG names ${env.BC_CONFIG}, which does not exist`);
    return env.BC_CONFIG;
  }
  for (const candidate of [resolve(cwd, CONFIG_MODULE_FILE), resolve(dataDir, 'config.json')]) if (existsSync(candidate)) return candidate;
  return undefined;
}

/**
 * The settings in a config file: JSON, or a module (TypeScript through tsx, the loader the project runs on) whose
 * default export is an object. Loaded synchronously, so every process reads its configuration the same way at start.
 */
export function readConfigFile(path: string): Record<string, unknown> {
  let value: unknown;
  try {
    if (moduleExtensions.has(extname(path))) {
      // tsx only when a module config is used: the processes of a stack configured otherwise never load it.
      const tsx = createRequire(import.meta.url)('tsx/cjs/api') as { require: (id: string, from: string) => unknown };
      const loaded = tsx.require(resolve(path), import.meta.url) as { default?: unknown };
      value = loaded.default ?? loaded;
    } else {
      value = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    }
  } catch (err) {
    throw new ConfigError('CONFIG_FILE_UNREADABLE', `${path} could not be loaded: ${(err as Error).message}`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError('CONFIG_FILE_UNREADABLE', `${path} must ${moduleExtensions.has(extname(path)) ? 'export default' : 'hold'} an object of settings`);
  return value as Record<string, unknown>;
}
