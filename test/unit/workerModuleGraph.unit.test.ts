import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const workerEntry = resolve(root, 'services/stack/runPlugin.ts');

// A static import or re-export of one of our files; `import type`/`export type` are erased, `import()` loads lazily.
const staticImport = /^(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;

/** Every file of ours a module loads when it is imported (what `better-compute/sdk/worker` costs a plugin's start-up). */
function moduleGraph(entry: string): string[] {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(staticImport)) pending.push(resolve(dirname(file), specifier!));
  }
  return [...seen];
}

const deciders = (files: string[]) =>
  files
    .filter((f) => readFileSync(f, 'utf8').includes('defineCommand('))
    .map((f) => relative(root, f))
    .sort();

describe('the plugin worker (better-compute/sdk/worker)', () => {
  const graph = moduleGraph(workerEntry);

  it('loads no catalog: the only deciders in its module graph are those of the commands its executor decides', () => {
    expect(graph.map((f) => relative(root, f))).not.toContain('services/api/commandCatalog.ts');
    // What `executorCommands` import comes with them (a file's sibling decider, a helper another decider exports).
    expect(deciders(graph)).toEqual(deciders(moduleGraph(resolve(root, 'services/workflow/executorCommands.ts'))));
  });

  it('is walked, not guessed: the graph reaches the runtime and the executor', () => {
    const files = graph.map((f) => relative(root, f));
    expect(files).toEqual(expect.arrayContaining(['services/stack/runtime.ts', 'services/workflow/executor.ts', 'services/workflow/executorCommands.ts']));
  });
});
