import type { Database } from 'better-sqlite3';
import type { SiteView } from '../../schemas/site/views.ts';

interface SiteRow {
  site_id: string;
  name: string;
  provisioning_cidrs: string;
  created_at: string;
  node_count: number;
}

const toView = (r: SiteRow): SiteView => ({
  siteId: r.site_id,
  name: r.name,
  provisioningCidrs: JSON.parse(r.provisioning_cidrs) as string[],
  createdAt: r.created_at,
  nodeCount: r.node_count,
});

export function listSites(db: Database): SiteView[] {
  return (db.prepare('SELECT * FROM sites ORDER BY site_id').all() as SiteRow[]).map(toView);
}

export function getSite(db: Database, siteId: string): SiteView | undefined {
  const row = db.prepare('SELECT * FROM sites WHERE site_id = ?').get(siteId) as SiteRow | undefined;
  return row && toView(row);
}
