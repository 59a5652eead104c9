/** A Redfish resource body. Everything read from a BMC is untrusted and narrowed with the helpers below. */
export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Vendors pad fixed-width fields (iLO's CPU model has trailing blanks); empty means unknown. */
export function text(value: unknown): string | null {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  return trimmed === '' ? null : trimmed;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function obj(value: unknown): Json {
  return isObject(value) ? value : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function strings(value: unknown): string[] {
  return arr(value).filter((v): v is string => typeof v === 'string');
}

/** `@odata.id` of a navigation property, following nested names: `linkOf(root, 'Links', 'Sessions')`. */
export function linkOf(from: unknown, ...path: string[]): string | undefined {
  let node: unknown = from;
  for (const name of path) node = isObject(node) ? node[name] : undefined;
  return isObject(node) ? str(node['@odata.id']) : undefined;
}
