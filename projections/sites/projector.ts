import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { sitesMigrations } from './schema.ts';

/** The `sites` read model: each site and how many nodes are enrolled there. */
export const sitesProjection = defineProjection({
  name: 'sites',
  migrations: sitesMigrations,
  apply(db, event, metadata) {
    switch (event.type) {
      case 'SiteCreated':
        statement(db, 'INSERT INTO sites (site_id, name, provisioning_cidrs, created_at) VALUES (?, ?, ?, ?)').run(
          event.data.siteId,
          event.data.name,
          JSON.stringify(event.data.provisioningCidrs),
          metadata.time,
        );
        return;
      case 'NodeEnrolled':
        statement(db, 'UPDATE sites SET node_count = node_count + 1 WHERE site_id = ?').run(event.data.siteId);
        return;
    }
  },
});
