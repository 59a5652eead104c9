import { setTimeout as sleep } from 'node:timers/promises';
import { Objm } from '@nats-io/obj';
import { describe, expect, it } from 'vitest';
import { BLOB_BUCKET, BlobStore } from '../../services/blobs/blobStore.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { startTestNats } from '../support/natsServer.ts';

const capabilityOf = (url: string) => url.split('/').at(-2)!;

describe('bundle grants in the blob store (a real nats-server)', () => {
  it('one grant per key however often it is asked for; it reads as missing past its expiry, and a prune deletes it', { timeout: 60_000 }, async () => {
    await using server = await startTestNats();
    const nc = await connectNats(server.url, 'blob-grants-test');
    try {
      const blobs = await BlobStore.open(nc, 'http://cp.test');
      const bucket = await new Objm(nc).open(BLOB_BUCKET);
      const grants = async () => (await bucket.list()).filter((o) => o.name.startsWith('grant')).map((o) => o.name);
      const { sha256 } = await blobs.putContent(new TextEncoder().encode('a module bundle'));
      const now = Date.now();

      // A command sent three times (a redelivery, a restarted controller): the same URL, one grant and its key's index.
      const terms = { key: 'cmd-apply-1', expiresAtMs: now + 1_500 };
      const first = await blobs.grantContent('n1', sha256, terms, now);
      expect(await blobs.grantContent('n1', sha256, terms, now + 10)).toEqual(first);
      expect(await blobs.grantContent('n1', sha256, { ...terms, expiresAtMs: now + 2_000 }, now + 20)).toEqual(first);
      expect(await grants()).toHaveLength(2);
      expect(new TextDecoder().decode(await blobs.read('n1', capabilityOf(first!.url), sha256))).toBe('a module bundle');
      // Another command, or the same key for another host: a grant of its own.
      const other = await blobs.grantContent('n2', sha256, { key: 'cmd-apply-2', expiresAtMs: now + 60_000 }, now);
      expect(other!.url).not.toBe(first!.url);
      await expect(blobs.read('n2', capabilityOf(first!.url), sha256)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await grants()).toHaveLength(4);

      await sleep(Math.max(0, now + 2_100 - Date.now()));
      // Past its expiry (moved later by the third ask) the URL opens nothing, before any prune ran.
      await expect(blobs.read('n1', capabilityOf(first!.url), sha256)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await blobs.pruneExpiredGrants()).toBe(2);
      expect(await grants()).toHaveLength(2);
      expect(new TextDecoder().decode(await blobs.read('n2', capabilityOf(other!.url), sha256))).toBe('a module bundle');
      // The content stays: a later send of the expired command gets a fresh grant, still one per key.
      const again = await blobs.grantContent('n1', sha256, { key: 'cmd-apply-1', expiresAtMs: Date.now() + 60_000 });
      expect(new TextDecoder().decode(await blobs.read('n1', capabilityOf(again!.url), sha256))).toBe('a module bundle');
      expect(await grants()).toHaveLength(4);
    } finally {
      await nc.close();
    }
  });
});
