import fc from 'fast-check';
import type { z } from 'zod';

/**
 * Values a client could put in any field: strings that look like what a field wants but are not (URLs without a host,
 * with a query, bracketed IPv6 left open, CIDRs past their prefix, dates out of range), text of every kind, numbers a
 * schema may not expect, and the wrong JSON types.
 */
const hostileStrings = fc.constantFrom(
  '',
  ' ',
  'not a url',
  'http://',
  'https://',
  'https://[::1',
  'https://h:99999',
  '//host/redfish/v1',
  'https://10.0.0.1/redfish/v1?x=1',
  'https://10.0.0.1/#frag',
  'ftp://10.0.0.1/',
  'javascript:alert(1)',
  '%E0%A4%A',
  '../../etc/passwd',
  '\u0000',
  '\ud800',
  'secret:',
  'bcj_x_y',
  '-1',
  'NaN',
  '1e309',
  '10.0.0.0/33',
  '::/129',
  '2026-13-45T99:99:99Z',
  '__proto__',
  'constructor',
  'x'.repeat(5_000),
);

const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileStrings, weight: 4 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
  { arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(-0, -1, 2 ** 53 + 2, 1e308)), weight: 1 },
  { arbitrary: fc.constantFrom(null, true, false, {}, [], { __proto__: null, constructor: 'x' }), weight: 1 },
);

/** The zod definition fields the walk reads (zod 4 keeps them on `_zod.def`). */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * A value shaped like `schema` (its objects, arrays, records and unions, every key optional) whose leaves are hostile:
 * so checks deep inside a body (a refine on `bmc.address`) see bad input, not just the top-level type check. Enums and
 * literals are sometimes valid, so a union's branch or a discriminator can be reached; at any level the whole
 * subtree may be a hostile leaf instead.
 */
export function hostilePayload(schema: z.ZodType, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const shaped = ((): fc.Arbitrary<unknown> | undefined => {
    if (depth > 8) return undefined;
    switch (def.type) {
      case 'object':
        return fc.record(Object.fromEntries(Object.entries(def.shape!).map(([key, field]) => [key, hostilePayload(field, depth + 1)])), {
          requiredKeys: [],
        });
      case 'array':
        return fc.array(hostilePayload(def.element!, depth + 1), { maxLength: 3 });
      case 'record':
        return fc.dictionary(fc.oneof(hostileStrings, fc.string({ maxLength: 8 })), hostilePayload(def.valueType!, depth + 1), { maxKeys: 3 });
      case 'union':
        return fc.oneof(...def.options!.map((option) => hostilePayload(option, depth + 1)));
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'catch':
      case 'nonoptional':
        return hostilePayload(def.innerType!, depth);
      case 'pipe':
        return hostilePayload(def.in!, depth);
      case 'enum':
        return fc.constantFrom(...Object.values(def.entries!));
      case 'literal':
        return fc.constantFrom(...def.values!);
      default:
        return undefined;
    }
  })();
  return shaped ? fc.oneof({ arbitrary: shaped, weight: 4 }, { arbitrary: hostileLeaf, weight: 1 }) : hostileLeaf;
}
