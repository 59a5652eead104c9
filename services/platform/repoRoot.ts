import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The repository (or installed package) root: two levels above this module in the source tree, and two more when it
 * runs compiled from `dist/node` (the build keeps the source layout under it).
 */
export const repoRoot = basename(here) === 'node' && basename(dirname(here)) === 'dist' ? dirname(dirname(here)) : here;
