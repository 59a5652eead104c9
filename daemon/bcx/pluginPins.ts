import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BcxPin } from '../../schemas/bcx/bcxPin.ts';

export interface PinnedPlugin {
  readonly pin: BcxPin;
  /** The program's absolute path. */
  readonly program: string;
}

/** Why a plugin is not run (an invalid pin, a first start that failed): each is reported, and the others still start. */
export interface PluginNotRun {
  readonly folder: string;
  readonly code: string;
  readonly message: string;
}

export const PIN_FILE = 'bcx-plugin.json';

/** The plugins the folder pins, one per sub-folder holding a `bcx-plugin.json` whose id is the folder's name. */
export async function readPluginPins(pluginsFolder: string): Promise<{ plugins: PinnedPlugin[]; unusable: PluginNotRun[] }> {
  const plugins: PinnedPlugin[] = [];
  const unusable: PluginNotRun[] = [];
  const entries = await readdir(pluginsFolder, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const folder = join(pluginsFolder, entry.name);
    try {
      const pin = BcxPin.parse(JSON.parse(await readFile(join(folder, PIN_FILE), 'utf8')));
      if (pin.id !== entry.name) throw new Error(`its id ${pin.id} is not its folder's name`);
      plugins.push({ pin, program: join(folder, pin.program) });
    } catch (err) {
      unusable.push({ folder, code: 'PLUGIN_PIN_INVALID', message: `${PIN_FILE}: ${(err as Error).message}`.slice(0, 1_000) });
    }
  }
  return { plugins, unusable };
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
