import { fileURLToPath } from 'node:url';

/**
 * Whether this module runs from the compiled build (`dist/node`, `npm run build`) rather than from its TypeScript
 * source through tsx: the build keeps the source layout, so the programs it starts are compiled siblings.
 */
export const runsCompiled = import.meta.url.endsWith('.js');

/**
 * The node arguments that run a program of the product, given its source (`new URL('./serve.ts', import.meta.url)`):
 * its compiled `.js` when this process runs compiled (no loader, no compile on start), else the source through tsx.
 */
export function programArgs(source: URL): string[] {
  const path = fileURLToPath(source);
  return runsCompiled ? [path.replace(/\.ts$/, '.js')] : ['--import', 'tsx', path];
}
