import { defineProjection } from '../runtime/projection.ts';
import { statement } from '../runtime/statements.ts';
import { applyRolloutEvent } from './rolloutProjector.ts';
import { modulesMigrations } from './schema.ts';

/**
 * The `modules` read model: modules, their published versions (with the signed manifest), the publisher keys, the
 * templates, each host's assignment (its template, pins and plan) and the rollouts (`rolloutProjector.ts`).
 */
export const modulesProjection = defineProjection({
  name: 'modules',
  migrations: modulesMigrations,
  apply(db, event, metadata, position) {
    switch (event.type) {
      case 'ModuleVersionPublished': {
        const d = event.data;
        // A version published before events named the key was verified against the publisher's key trusted then: only
        // the current key verifies (a rotated-out one is refused), and the publisher row holds it at this log position.
        statement(
          db,
          `INSERT OR IGNORE INTO module_versions
             (module, version, bundle_sha256, manifest_sha256, publisher_id, manifest, published_at, published_by, seq, signing_key)
           VALUES (@module, @version, @bundle, @manifestSha, @publisher, @manifest, @time, @actor, @seq,
             COALESCE(@key, (SELECT public_key FROM module_publishers WHERE publisher_id = @publisher)))`,
        ).run({
          module: d.module,
          version: d.version,
          bundle: d.bundleSha256,
          manifestSha: d.manifestSha256,
          publisher: d.publisherId,
          manifest: JSON.stringify(d.manifest),
          time: metadata.time,
          actor: metadata.actor,
          seq: position.seq,
          key: d.publicKey ?? null,
        });
        // Counted from the versions, not incremented: the same event applied twice leaves the same row.
        statement(
          db,
          `INSERT INTO modules (name, version_count, last_version, last_published_at, last_seq)
           VALUES (@module, (SELECT COUNT(*) FROM module_versions WHERE module = @module), @version, @time, @seq)
           ON CONFLICT (name) DO UPDATE SET version_count = excluded.version_count, last_version = excluded.last_version,
             last_published_at = excluded.last_published_at, last_seq = excluded.last_seq`,
        ).run({ module: d.module, version: d.version, time: metadata.time, seq: position.seq });
        return;
      }
      case 'PublisherRegistered':
        statement(db, 'INSERT OR REPLACE INTO module_publishers (publisher_id, public_key, revoked, retired_keys, updated_at) VALUES (?, ?, 0, ?, ?)').run(
          event.data.publisherId,
          event.data.publicKey,
          '[]',
          metadata.time,
        );
        return;
      case 'PublisherKeyRotated':
        statement(
          db,
          `UPDATE module_publishers SET public_key = ?, retired_keys = json_insert(retired_keys, '$[#]', ?), updated_at = ? WHERE publisher_id = ?`,
        ).run(event.data.publicKey, event.data.previousPublicKey, metadata.time, event.data.publisherId);
        return;
      case 'PublisherRevoked':
        statement(db, 'UPDATE module_publishers SET revoked = 1, updated_at = ? WHERE publisher_id = ?').run(metadata.time, event.data.publisherId);
        return;
      case 'TemplateDefined':
        statement(db, 'INSERT OR REPLACE INTO templates (template_id, requires, includes, defined_at, defined_by) VALUES (?, ?, ?, ?, ?)').run(
          event.data.templateId,
          JSON.stringify(event.data.requires),
          JSON.stringify(event.data.includes),
          metadata.time,
          metadata.actor,
        );
        return;
      case 'HostPlanAssigned': {
        const d = event.data;
        statement(
          db,
          `INSERT OR REPLACE INTO host_assignments (node_id, template, pins, plan, plan_digest, assigned_at, assigned_by)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(d.nodeId, d.template, JSON.stringify(d.pins), JSON.stringify(d.plan), d.planDigest, metadata.time, metadata.actor);
        return;
      }
      default:
        applyRolloutEvent(db, event, metadata, position.seq);
        return;
    }
  },
});
