import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Json = Record<string, unknown>;

/**
 * Turns a request path or an `@odata.id` into the store key: the part after `/redfish/v1`, lower-cased, without
 * empty segments. Real BMCs (iLO) match URIs case-insensitively and ignore a trailing `/`, and their own links
 * rely on that, so the key is the only thing ever compared. Returns undefined outside `/redfish/v1`.
 */
export function toKey(uriPath: string): string | undefined {
  const pathOnly = uriPath.split(/[?#]/, 1)[0] ?? '';
  let segments: string[];
  try {
    segments = pathOnly
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s).toLowerCase());
  } catch {
    return undefined;
  }
  if (segments[0] !== 'redfish' || segments[1] !== 'v1') return undefined;
  return segments.slice(2).join('/');
}

export function parentKey(key: string): string {
  const cut = key.lastIndexOf('/');
  return cut < 0 ? '' : key.slice(0, cut);
}

// The file index is the same for every simulator on a tree, so it is built once per process.
const indexCache = new Map<string, Map<string, string>>();

function buildIndex(treeDir: string): Map<string, string> {
  const index = new Map<string, string>();
  const walk = (dir: string, rel: string[]): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const nextRel = [...rel, entry.name.toLowerCase()];
      if (entry.isDirectory()) walk(join(dir, entry.name), nextRel);
      else if (entry.name === 'index.json') index.set(rel.join('/'), join(dir, entry.name));
      else if (entry.name.endsWith('.json')) index.set(nextRel.join('/'), join(dir, entry.name));
    }
  };
  walk(treeDir, []);
  return index;
}

/**
 * The static tree with a mutable overlay. Documents are parsed lazily and then owned by this store, so one
 * simulator's live state never leaks into another simulator started on the same tree.
 */
export class TreeStore {
  private readonly files: Map<string, string>;
  private readonly docs = new Map<string, Json>();
  private readonly deleted = new Set<string>();

  constructor(treeDir: string) {
    let files = indexCache.get(treeDir);
    if (!files) {
      files = buildIndex(treeDir);
      indexCache.set(treeDir, files);
    }
    this.files = files;
  }

  get(key: string): Json | undefined {
    if (this.deleted.has(key)) return undefined;
    const cached = this.docs.get(key);
    if (cached) return cached;
    const file = this.files.get(key);
    if (!file) return undefined;
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const doc = parsed as Json;
    this.docs.set(key, doc);
    return doc;
  }

  /** Follows an `@odata.id` the way the server would resolve a request for it. */
  resolve(uri: unknown): { key: string; doc: Json } | undefined {
    if (typeof uri !== 'string') return undefined;
    const key = toKey(uri);
    if (key === undefined) return undefined;
    const doc = this.get(key);
    return doc ? { key, doc } : undefined;
  }

  /** Every key the store holds (from the tree or put since), at `prefix` or below it. */
  keysUnder(prefix: string): string[] {
    const keys = new Set([...this.files.keys(), ...this.docs.keys()]);
    return [...keys].filter((k) => !this.deleted.has(k) && (k === prefix || k.startsWith(`${prefix}/`)));
  }

  put(key: string, doc: Json): void {
    this.deleted.delete(key);
    this.docs.set(key, doc);
  }

  remove(key: string): void {
    this.docs.delete(key);
    this.deleted.add(key);
  }
}

function hash8(doc: Json): string {
  const { ['@odata.etag']: _drop, ...rest } = doc;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 8).toUpperCase();
}

/** The tree's own `@odata.etag` when it has one (iLO), otherwise a content hash (the DMTF tree has none). */
export function etagOf(doc: Json): string {
  const own = doc['@odata.etag'];
  return typeof own === 'string' ? own : `W/"${hash8(doc)}"`;
}

/** Call after every mutation: a document that carries `@odata.etag` must show a new one. */
export function touch(doc: Json): void {
  if (typeof doc['@odata.etag'] === 'string') doc['@odata.etag'] = `W/"${hash8(doc)}"`;
}

/** If-Match semantics (RFC 9110, weak comparison): `*` or any listed tag equal to the current one. */
export function ifMatchOk(header: string | undefined, doc: Json): boolean {
  if (header === undefined || header.trim() === '*') return true;
  const strip = (tag: string): string => tag.trim().replace(/^W\//, '');
  const current = strip(etagOf(doc));
  return header.split(',').some((tag) => strip(tag) === current);
}

/** Deep merge for test overrides; `undefined` deletes a key so a test can remove what the tree declares. */
export function deepMerge(target: Json, patch: Json): void {
  for (const [name, value] of Object.entries(patch)) {
    const current = target[name];
    if (value === undefined) delete target[name];
    else if (isPlainObject(value) && isPlainObject(current)) deepMerge(current, value);
    else target[name] = structuredClone(value);
  }
}

export function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function linkId(value: unknown): string | undefined {
  if (!isPlainObject(value)) return undefined;
  const id = value['@odata.id'];
  return typeof id === 'string' ? id : undefined;
}

/** Adds or removes a member in a collection document, keeping `Members@odata.count` true. */
export function addMember(collection: Json, uri: string): void {
  const members = Array.isArray(collection.Members) ? (collection.Members as unknown[]) : [];
  members.push({ '@odata.id': uri });
  collection.Members = members;
  collection['Members@odata.count'] = members.length;
  touch(collection);
}

export function removeMember(collection: Json, key: string): void {
  const members = Array.isArray(collection.Members) ? (collection.Members as unknown[]) : [];
  const kept = members.filter((m) => {
    const id = linkId(m);
    return id === undefined || toKey(id) !== key;
  });
  collection.Members = kept;
  collection['Members@odata.count'] = kept.length;
  touch(collection);
}

/** Joins a collection's own `@odata.id` (keeping its case) with a new member id. */
export function childUri(collection: Json, fallbackKey: string, id: string): string {
  const own = typeof collection['@odata.id'] === 'string' ? collection['@odata.id'] : `/redfish/v1/${fallbackKey}`;
  return `${own.replace(/\/+$/, '')}/${encodeURIComponent(id)}`;
}
