#!/usr/bin/env node
// The CLI is TypeScript; tsx's loader lets the published bin run it without a build step.
import { register } from 'tsx/esm/api';

register();
await import('./cli/main.ts');
