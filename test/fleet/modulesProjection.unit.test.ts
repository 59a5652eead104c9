import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { modulesProjection } from '../../projections/modules/projector.ts';
import { getModule, listAssignments } from '../../projections/modules/queries.ts';
import type { EventMetadata } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import type { ModuleManifest } from '../../schemas/fleet/moduleManifest.ts';

function project(events: readonly PlatformEvent[]) {
  const db = new Database(':memory:');
  for (const m of modulesProjection.migrations) db.exec(m);
  events.forEach((e, i) => {
    const metadata = { time: `2026-12-02T12:00:${String(i).padStart(2, '0')}.000Z`, actor: 'op' } as EventMetadata;
    modulesProjection.apply(db, e, metadata, { seq: i + 1, subject: 'bc.evt.fleet.module.nginx' });
  });
  return db;
}

const manifest = (version: string): ModuleManifest => ({
  name: 'nginx',
  version,
  provides: ['http'],
  requires: [],
  exclusive: [],
  rebootRequired: false,
  probes: [],
  files: [{ path: 'bin/nginx', sha256: 'a'.repeat(64), mode: 0o755 }],
});

const published = (version: string, publicKey?: string): PlatformEvent => ({
  type: 'ModuleVersionPublished',
  data: {
    module: 'nginx',
    version,
    bundleSha256: 'b'.repeat(64),
    manifestSha256: 'c'.repeat(64),
    publisherId: 'acme',
    ...(publicKey === undefined ? {} : { publicKey }),
    manifest: manifest(version),
  },
});

const assigned = (nodeId: string, template: string | null, plan: Record<string, string>): PlatformEvent => ({
  type: 'HostPlanAssigned',
  data: { nodeId, template, pins: [], plan, planDigest: `digest-${nodeId}` },
});

describe('the modules read model: signing keys and the hosts’ assignments', () => {
  it('records the key a version was signed with, and for a version whose event does not name it, the key the publisher held then', () => {
    const db = project([
      { type: 'PublisherRegistered', data: { publisherId: 'acme', publicKey: 'KEY-1' } },
      published('1.24.0'),
      { type: 'PublisherKeyRotated', data: { publisherId: 'acme', publicKey: 'KEY-2', previousPublicKey: 'KEY-1' } },
      published('1.26.1', 'KEY-2'),
      published('1.27.0'),
    ]);
    expect(getModule(db, 'nginx')!.versions.map((v) => [v.version, v.publisherId, v.signingKey])).toEqual([
      ['1.24.0', 'acme', 'KEY-1'],
      ['1.26.1', 'acme', 'KEY-2'],
      ['1.27.0', 'acme', 'KEY-2'],
    ]);
  });

  it('lists every host’s assignment in node order, or those whose plan has a module, or of a template', () => {
    const db = project([
      assigned('n2', 'web', { nginx: '1.24.0', ntp: '4.2.0' }),
      assigned('n1', 'web', { nginx: '1.26.1' }),
      assigned('n3', null, { ntp: '4.2.0' }),
      assigned('n1', 'edge', { nginx: '1.24.0' }),
    ]);
    const hosts = (filter: { module?: string; template?: string } = {}) =>
      listAssignments(db, { ...filter, limit: 100 }).items.map((a) => [a.nodeId, a.template, a.plan]);
    expect(hosts()).toEqual([
      ['n1', 'edge', { nginx: '1.24.0' }],
      ['n2', 'web', { nginx: '1.24.0', ntp: '4.2.0' }],
      ['n3', null, { ntp: '4.2.0' }],
    ]);
    expect(hosts({ module: 'nginx' }).map(([n]) => n)).toEqual(['n1', 'n2']);
    expect(hosts({ module: 'ntp', template: 'web' }).map(([n]) => n)).toEqual(['n2']);
    expect(hosts({ module: 'redis' })).toEqual([]);

    // A page at a time, from where the last one ended.
    const first = listAssignments(db, { limit: 2 });
    expect([first.items.map((a) => a.nodeId), first.nextCursor]).toEqual([['n1', 'n2'], expect.any(String)]);
    const second = listAssignments(db, { limit: 2, cursor: first.nextCursor! });
    expect([second.items.map((a) => a.nodeId), second.nextCursor]).toEqual([['n3'], null]);
    expect(listAssignments(db, { module: 'nginx', limit: 2 }).nextCursor).toBeNull();
  });
});
