import type { z } from 'zod';
import type { Config } from './config.ts';

/** What a deployment config may set: any setting of `Config`, as written (defaults left out). */
export type DeploymentSettings = Partial<z.input<typeof Config>>;

/**
 * The default export of `better-compute.config.ts` (`import { defineConfig } from 'better-compute/config'`): the
 * compiler checks names and types as it is written; loading checks values (`loadConfig`), listing every problem.
 */
export const defineConfig = (settings: DeploymentSettings): DeploymentSettings => settings;
