import type { z } from 'zod';

/**
 * A service's settings: each key read from its environment variable (unset or empty means the schema's default),
 * then `overrides` (tests, embedding), validated by the schema.
 */
export function loadEnvSettings<S extends z.ZodType<Record<string, unknown>>>(
  schema: S,
  names: Record<keyof z.infer<S> & string, string>,
  env: NodeJS.ProcessEnv,
  overrides: Partial<z.infer<S>>,
): z.infer<S> {
  const fromEnv: Record<string, string> = {};
  for (const [key, name] of Object.entries(names)) {
    const value = env[name];
    if (value !== undefined && value !== '') fromEnv[key] = value;
  }
  return schema.parse({ ...fromEnv, ...overrides });
}
