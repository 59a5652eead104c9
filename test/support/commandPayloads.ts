import type { StoredEvent } from '../../schemas/envelope.ts';

/** A valid `metal.enroll` body for a node whose BMC nobody dials. */
export const enrollPayload = (nodeId: string, siteId = 'dc1') => ({
  nodeId,
  siteId,
  bmc: { address: `https://127.0.0.1:9/redfish/v1/Systems/${nodeId}`, credentialsRef: `secret:${nodeId}-bmc` },
  hardwareProfile: 'default',
  macs: ['52:54:00:00:00:01'],
});

/** Envelope metadata for an event a test writes to the log by hand (as an older writer or a restore would). */
export const siteEventMetadata = (commandId: string, siteId: string): StoredEvent['metadata'] => ({
  eventId: `${commandId}-e`,
  aggregateType: 'site.site',
  aggregateId: siteId,
  commandId,
  commandName: 'site.create',
  correlationId: commandId,
  causationId: commandId,
  actor: 'test',
  time: new Date(0).toISOString(),
});

/** A `metal.deploy` body for `nodeId` (the image is never fetched in API-level tests). */
export const deployBody = (nodeId: string) => ({ nodeId, imageUrl: 'http://img.test/a.raw', imageSha256: 'a'.repeat(64), role: 'web' });
