#!/usr/bin/env node
// The CLI: compiled when `npm run build` made a fresh build, else its TypeScript through tsx's loader, so the published
// bin runs without a build step too.
import { pathToFileURL } from 'node:url';
import { compiledEntry } from './build/compiledEntry.mjs';

const entry = compiledEntry('scripts/cli/main.ts');
if (entry.path) {
  await import(pathToFileURL(entry.path).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./cli/main.ts');
}
