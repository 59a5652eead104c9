import type { Database } from 'better-sqlite3';
import type { ModuleManifest } from '../../schemas/fleet/moduleManifest.ts';
import { decodeCursor, encodeCursor } from '../runtime/cursor.ts';
import type { AssignmentView, ModuleVersionView, ModuleView, PublisherView, TemplateView } from '../../schemas/fleet/views.ts';

interface ModuleRow {
  name: string;
  version_count: number;
  last_version: string;
  last_published_at: string;
}

interface VersionRow {
  module: string;
  version: string;
  bundle_sha256: string;
  manifest_sha256: string;
  publisher_id: string;
  manifest: string;
  published_at: string;
  published_by: string;
  signing_key: string | null;
}

interface PublisherRow {
  publisher_id: string;
  public_key: string;
  revoked: number;
  retired_keys: string;
  updated_at: string;
}

const moduleView = (r: ModuleRow): ModuleView => ({
  name: r.name,
  versionCount: r.version_count,
  lastVersion: r.last_version,
  lastPublishedAt: r.last_published_at,
});

const versionView = (r: VersionRow): ModuleVersionView => ({
  module: r.module,
  version: r.version,
  bundleSha256: r.bundle_sha256,
  manifestSha256: r.manifest_sha256,
  publisherId: r.publisher_id,
  signingKey: r.signing_key,
  publishedAt: r.published_at,
  publishedBy: r.published_by,
  manifest: JSON.parse(r.manifest) as ModuleManifest,
});

export function listModules(db: Database): ModuleView[] {
  return (db.prepare('SELECT * FROM modules ORDER BY name').all() as ModuleRow[]).map(moduleView);
}

/** A module and its versions in publishing order; undefined when it has none. */
export function getModule(db: Database, name: string): (ModuleView & { versions: ModuleVersionView[] }) | undefined {
  const row = db.prepare('SELECT * FROM modules WHERE name = ?').get(name) as ModuleRow | undefined;
  if (!row) return undefined;
  const versions = db.prepare('SELECT * FROM module_versions WHERE module = ? ORDER BY seq').all(name) as VersionRow[];
  return { ...moduleView(row), versions: versions.map(versionView) };
}

export function listPublishers(db: Database): PublisherView[] {
  return (db.prepare('SELECT * FROM module_publishers ORDER BY publisher_id').all() as PublisherRow[]).map((r) => ({
    publisherId: r.publisher_id,
    publicKey: r.public_key,
    status: r.revoked ? 'revoked' : 'active',
    retiredKeys: JSON.parse(r.retired_keys) as string[],
    updatedAt: r.updated_at,
  }));
}

interface TemplateRow {
  template_id: string;
  requires: string;
  includes: string;
  defined_at: string;
  defined_by: string;
}

interface AssignmentRow {
  node_id: string;
  template: string | null;
  pins: string;
  plan: string;
  plan_digest: string;
  assigned_at: string;
  assigned_by: string;
}

const templateView = (r: TemplateRow): TemplateView => ({
  templateId: r.template_id,
  requires: JSON.parse(r.requires) as TemplateView['requires'],
  includes: JSON.parse(r.includes) as string[],
  definedAt: r.defined_at,
  definedBy: r.defined_by,
});

const assignmentView = (r: AssignmentRow): AssignmentView => ({
  nodeId: r.node_id,
  template: r.template,
  pins: JSON.parse(r.pins) as AssignmentView['pins'],
  plan: JSON.parse(r.plan) as AssignmentView['plan'],
  planDigest: r.plan_digest,
  assignedAt: r.assigned_at,
  assignedBy: r.assigned_by,
});

export function listTemplates(db: Database): TemplateView[] {
  return (db.prepare('SELECT * FROM templates ORDER BY template_id').all() as TemplateRow[]).map(templateView);
}

/** A template and how many hosts are assigned it; undefined when it is not defined. */
export function getTemplate(db: Database, templateId: string): (TemplateView & { hostCount: number }) | undefined {
  const row = db.prepare('SELECT * FROM templates WHERE template_id = ?').get(templateId) as TemplateRow | undefined;
  if (!row) return undefined;
  const { n } = db.prepare('SELECT COUNT(*) AS n FROM host_assignments WHERE template = ?').get(templateId) as { n: number };
  return { ...templateView(row), hostCount: n };
}

/**
 * Hosts' assignments in node order, a page at a time: every one, or those whose plan has `module` (of `template`, when
 * given). `nextCursor` names where the next page starts; null on the last.
 */
export function listAssignments(
  db: Database,
  filter: { module?: string; template?: string; cursor?: string; limit: number },
): { items: AssignmentView[]; nextCursor: string | null } {
  const rows = db
    .prepare(
      `SELECT * FROM host_assignments WHERE node_id > @after
         AND (@module IS NULL OR json_extract(plan, '$.' || json_quote(@module)) IS NOT NULL)
         AND (@template IS NULL OR template = @template) ORDER BY node_id LIMIT @fetch`,
    )
    .all({
      after: filter.cursor ? decodeCursor(filter.cursor) : '',
      module: filter.module ?? null,
      template: filter.template ?? null,
      fetch: filter.limit + 1,
    }) as AssignmentRow[];
  const page = rows.slice(0, filter.limit).map(assignmentView);
  return { items: page, nextCursor: rows.length > filter.limit ? encodeCursor(page.at(-1)!.nodeId) : null };
}

export function getAssignment(db: Database, nodeId: string): AssignmentView | undefined {
  const row = db.prepare('SELECT * FROM host_assignments WHERE node_id = ?').get(nodeId) as AssignmentRow | undefined;
  return row ? assignmentView(row) : undefined;
}

/** A host's pinned plan as sensors read it: each pinned module's version and that version's manifest digest. */
export interface PinnedPlan {
  nodeId: string;
  assignedAt: string;
  planDigest: string;
  /** In module-name order; `digest` null when the version is not in the read model (never published here). */
  modules: { name: string; version: string; digest: string | null }[];
}

/** Every host's pinned plan, with the manifest digest each pinned version was published with. */
export function pinnedPlans(db: Database): PinnedPlan[] {
  const digests = new Map(
    (db.prepare('SELECT module, version, manifest_sha256 FROM module_versions').all() as { module: string; version: string; manifest_sha256: string }[]).map(
      (r) => [`${r.module}@${r.version}`, r.manifest_sha256],
    ),
  );
  const rows = db.prepare('SELECT node_id, plan, plan_digest, assigned_at FROM host_assignments ORDER BY node_id').all() as Pick<
    AssignmentRow,
    'node_id' | 'plan' | 'plan_digest' | 'assigned_at'
  >[];
  return rows.map((r) => ({
    nodeId: r.node_id,
    assignedAt: r.assigned_at,
    planDigest: r.plan_digest,
    modules: Object.entries(JSON.parse(r.plan) as AssignmentView['plan'])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, version]) => ({ name, version, digest: digests.get(`${name}@${version}`) ?? null })),
  }));
}

/** A host assigned a template: what its plan was resolved from and the plan it is pinned to. */
export type TemplateAssignment = Pick<AssignmentView, 'nodeId' | 'template' | 'pins' | 'plan' | 'planDigest'> & { template: string };

/** Every host assigned a template, in node order. */
export function templateAssignments(db: Database): TemplateAssignment[] {
  const rows = db.prepare('SELECT * FROM host_assignments WHERE template IS NOT NULL ORDER BY node_id').all() as (AssignmentRow & { template: string })[];
  return rows.map((r) => ({ ...assignmentView(r), template: r.template }));
}

/** Every published version's manifest, in publishing order (what a closure is resolved over). */
export function publishedManifests(db: Database): ModuleManifest[] {
  return (db.prepare('SELECT manifest FROM module_versions ORDER BY module, seq').all() as { manifest: string }[]).map(
    (r) => JSON.parse(r.manifest) as ModuleManifest,
  );
}
