#!/usr/bin/env node
// `npm start`: the stack from the compiled build when `npm run build` made a fresh one, else from the TypeScript
// sources through tsx (a plain clone starts without a build step). The processes it starts run the same way.
import { pathToFileURL } from 'node:url';
import { compiledEntry } from './build/compiledEntry.mjs';

const entry = compiledEntry('services/stack/start.ts');
if (entry.path) {
  await import(pathToFileURL(entry.path).href);
} else {
  console.error(`starting from the TypeScript sources through tsx: ${entry.reason}`);
  const { register } = await import('tsx/esm/api');
  register();
  await import('../services/stack/start.ts');
}
