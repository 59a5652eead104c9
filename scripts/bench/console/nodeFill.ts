import type { EventBatch } from '../../../schemas/envelope.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import type { EventFillMessage } from '../fastFill.ts';
import { encodeBatch, fillCommandId } from '../payloads.ts';

/** The two sites the bench's nodes are split over: the filter change is from "any site" to the second. */
export const benchSites = ['bench-a', 'bench-b'] as const;

/**
 * Event `i` of the console bench's fill: node `i` enrolled at `bench-a` (even) or `bench-b` (odd), as a node looks
 * before its first inspection; MACs and BMC addresses differ per node, as a search would tell them apart.
 */
export function consoleFillMessage(i: number): EventFillMessage {
  const nodeId = `cn-${String(i).padStart(5, '0')}`;
  const commandId = fillCommandId(i);
  const hex = (n: number) => (n & 255).toString(16).padStart(2, '0');
  const batch: EventBatch = {
    events: [
      {
        type: 'NodeEnrolled',
        version: 1,
        data: {
          nodeId,
          siteId: benchSites[i % 2]!,
          bmc: { address: `https://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, credentialsRef: `secret:bmc-${i}` },
          hardwareProfile: i % 3 === 0 ? 'r640' : 'r750',
          macs: [`52:54:00:${hex(i >> 16)}:${hex(i >> 8)}:${hex(i)}`],
        },
        metadata: {
          eventId: `e-${i.toString(36).padStart(8, '0')}`,
          aggregateType: 'metal.node',
          aggregateId: nodeId,
          commandId,
          commandName: 'metal.enroll',
          correlationId: commandId,
          causationId: commandId,
          actor: 'bench',
          time: '2025-01-01T00:00:00.000Z',
        },
      },
    ],
  };
  return { subject: Subjects.aggregateEvents('metal', 'node', nodeId), data: encodeBatch(batch), commandId, previousIndex: undefined };
}
