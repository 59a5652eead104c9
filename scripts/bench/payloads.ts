import type { EventBatch, EventMetadata } from '../../schemas/envelope.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { EventFillMessage } from './fastFill.ts';

/** Events per bench node in the projector fill: one NodeEnrolled, then NodeMaintenanceSet toggles. */
export const EVENTS_PER_NODE = 5;

const TIME = '2025-01-01T00:00:00.000Z';
const encoder = new TextEncoder();

function metadata(aggregateType: string, aggregateId: string, commandId: string, commandName: string, n: number): EventMetadata {
  return {
    eventId: `e-${n.toString(36).padStart(8, '0')}`,
    aggregateType,
    aggregateId,
    commandId,
    commandName,
    correlationId: commandId,
    causationId: commandId,
    actor: 'bench',
    time: TIME,
  };
}

/** A NodeMaintenanceSet batch of about 240 bytes of JSON, as the raw and append measurements publish. */
export function maintenanceBatch(nodeId: string, commandId: string, n: number): EventBatch {
  return {
    events: [
      {
        type: 'NodeMaintenanceSet',
        version: 1,
        data: { nodeId, on: n % 2 === 0, reason: null, source: 'operator' },
        metadata: metadata('metal.node', nodeId, commandId, 'metal.setMaintenance', n),
      },
    ],
  };
}

/** A NodeEnrolled batch (about 480 bytes of JSON): a node with a state its later messages carry. */
export function enrolledBatch(nodeId: string, commandId: string, n: number, node = n): EventBatch {
  return {
    events: [
      {
        type: 'NodeEnrolled',
        version: 1,
        data: {
          nodeId,
          siteId: 'bench-site',
          bmc: { address: `https://10.${(node >> 16) & 255}.${(node >> 8) & 255}.${node & 255}`, credentialsRef: `secret:bmc-${node}` },
          hardwareProfile: 'default',
          macs: ['52:54:00:12:34:56'],
        },
        metadata: metadata('metal.node', nodeId, commandId, 'metal.enroll', n),
      },
    ],
  };
}

/** Event `n` of a bench node's life: enrolled first, then its maintenance flag toggled. */
export const nodeBatch = (nodeId: string, commandId: string, n: number): EventBatch =>
  n === 0 ? enrolledBatch(nodeId, commandId, 0) : maintenanceBatch(nodeId, commandId, n);

export const encodeBatch = (batch: EventBatch): Uint8Array => encoder.encode(JSON.stringify(batch));

export const benchNodeId = (node: number) => `bn-${node}`;
export const fillCommandId = (i: number) => `fill-${i.toString(36).padStart(8, '0')}`;

/**
 * Event `i` of the projector fill, valid for the nodes projection: node `i / EVENTS_PER_NODE` is enrolled by its
 * first event and has its maintenance flag toggled by the following ones.
 */
export function fillMessage(i: number): EventFillMessage {
  const node = Math.floor(i / EVENTS_PER_NODE);
  const nodeId = benchNodeId(node);
  const commandId = fillCommandId(i);
  const batch = i % EVENTS_PER_NODE === 0 ? enrolledBatch(nodeId, commandId, i, node) : maintenanceBatch(nodeId, commandId, i);
  return {
    subject: Subjects.aggregateEvents('metal', 'node', nodeId),
    data: encodeBatch(batch),
    commandId,
    previousIndex: i % EVENTS_PER_NODE === 0 ? undefined : i - 1,
  };
}
