import { z } from 'zod';
import { PlatformError } from '../../schemas/platformError.ts';
import { ProviderAccountShape, type ProviderManifest } from '../../schemas/vps/providerAccountShape.ts';
import type { ProviderDefinition } from './provider.ts';

const hasConfigSchema = (value: { id: string }): value is ProviderDefinition =>
  'configSchema' in value && (value as { configSchema?: unknown }).configSchema instanceof z.ZodType;

/**
 * What a plugin registers for one provider: its id and, for a `defineProvider` value, its `configSchema` as JSON
 * Schema (the input side: a field with a default may be left out), which the control plane checks every new account
 * against. A config schema that does not translate to an object schema the control plane can check is refused here,
 * at the plugin's start, rather than letting every account through unchecked.
 */
export function providerManifestOf(provider: { readonly id: string }): ProviderManifest {
  if (!hasConfigSchema(provider)) return { id: provider.id };
  const derived = z.toJSONSchema(provider.configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  // A plain z.object drops keys it does not declare; in an account that is a typo the provider would silently ignore,
  // so the shape refuses them unless the schema says otherwise (z.looseObject).
  const parsed = ProviderAccountShape.safeParse({ additionalProperties: false, ...derived });
  if (!parsed.success) {
    const paths = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
    throw new PlatformError('VALIDATION_FAILED', `provider ${provider.id}: its configSchema is not an object schema the control plane can check (${paths})`);
  }
  return { id: provider.id, account: parsed.data };
}
