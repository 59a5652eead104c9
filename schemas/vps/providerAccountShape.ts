import { z } from 'zod';
import { ResourceId } from '../ids.ts';
import type { Issue } from '../platformError.ts';

/**
 * The shape of a provider account's settings and credential identity (everything but the sealed token): a JSON
 * Schema object (draft 2020-12) that a provider's plugin registers in its manifest, derived by the SDK from the
 * provider's zod `configSchema`. The control plane never runs plugin code, so this data is what `vps.createProviderAccount`
 * checks an account against: `{ region, ...config }`, exactly what the provider's `create` will be given.
 */
export const ProviderAccountShape = z
  .looseObject({
    type: z.literal('object'),
    properties: z.record(z.string().max(100), z.record(z.string(), z.unknown())).refine((p) => Object.keys(p).length <= 64, 'at most 64 properties'),
    required: z.array(z.string().max(100)).max(64).optional(),
    additionalProperties: z.union([z.boolean(), z.record(z.string(), z.unknown())]).optional(),
  })
  .refine((shape) => JSON.stringify(shape).length <= 16_384, 'at most 16 KiB of JSON Schema')
  .refine((shape) => compile(shape) !== undefined, 'not a JSON Schema the control plane can check');
export type ProviderAccountShape = z.infer<typeof ProviderAccountShape>;

/** What a plugin registers for each provider it brings: the id, and the account shape (absent in older manifests). */
export const ProviderManifest = z.object({ id: ResourceId, account: ProviderAccountShape.optional() });
export type ProviderManifest = z.infer<typeof ProviderManifest>;

// Registrations repeat at every plugin start and every account command reads them: compile each shape once.
const compiled = new Map<string, z.ZodType | undefined>();

function compile(shape: Record<string, unknown>): z.ZodType | undefined {
  const key = JSON.stringify(shape);
  if (compiled.has(key)) return compiled.get(key);
  let schema: z.ZodType | undefined;
  try {
    schema = z.fromJSONSchema(shape);
  } catch {
    schema = undefined;
  }
  if (compiled.size >= 256) compiled.clear();
  compiled.set(key, schema);
  return schema;
}

/**
 * What is wrong with `account` against `shape`, one issue per path; empty when it fits. The messages say what was
 * expected and never quote the value given, so an operator who pasted a secret into the wrong field never sees it
 * echoed in an error, a log or a problem document.
 */
export function accountShapeIssues(shape: ProviderAccountShape, account: Record<string, unknown>): Issue[] {
  const schema = compile(shape);
  if (schema === undefined) return [{ path: '(shape)', message: 'the provider declared a shape the control plane cannot check' }];
  const parsed = schema.safeParse(account);
  if (parsed.success) return [];
  return parsed.error.issues.flatMap((issue): Issue[] => {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: path ? `${path}.${key}` : key, message: 'not declared by the provider' }));
    return [{ path: path || '(root)', message: describe(issue) }];
  });
}

function describe(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'invalid_format':
      return `not a valid ${issue.format}`;
    case 'too_small':
      return `below the minimum (${String(issue.minimum)})`;
    case 'too_big':
      return `above the maximum (${String(issue.maximum)})`;
    case 'invalid_value':
      return `not one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `does not fit (${issue.code})`;
  }
}
