import { describe, it } from 'vitest';
import type { MetalEvent } from '../../schemas/metal/events.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { reportBmcHealth } from '../../services/metal/node/reportBmcHealth.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(nodeAggregate);
const n = 'n1';
const enrolled: MetalEvent = {
  type: 'NodeEnrolled',
  data: { nodeId: n, siteId: 'dc1', bmc: { address: 'https://10.0.0.1', credentialsRef: 'secret:b' }, hardwareProfile: 'x', macs: ['52:54:00:aa:bb:01'] },
};
const maintenance = (on: boolean, source: 'operator' | 'bmc', reason: string | null = on ? 'why' : null): MetalEvent => ({
  type: 'NodeMaintenanceSet',
  data: { nodeId: n, on, reason, source },
});
const lostReport = { nodeId: n, reachable: false, detail: 'REDFISH_UNAVAILABLE connect ECONNREFUSED' };

describe('metal.reportBmcHealth', () => {
  it('sets maintenance with source bmc when the BMC is lost, and clears exactly that on recovery', () => {
    given([enrolled])
      .when(reportBmcHealth, lostReport)
      .then([maintenance(true, 'bmc', 'BMC unreachable: REDFISH_UNAVAILABLE connect ECONNREFUSED')]);
    given([enrolled, maintenance(true, 'bmc')])
      .when(reportBmcHealth, { nodeId: n, reachable: true })
      .then([maintenance(false, 'bmc')]);
  });

  it('leaves a flag an operator or a failed release set, and says nothing twice', () => {
    given([enrolled, maintenance(true, 'operator')])
      .when(reportBmcHealth, { nodeId: n, reachable: true })
      .then([]);
    given([enrolled, maintenance(true, 'operator')])
      .when(reportBmcHealth, lostReport)
      .then([]);
    const failedRelease: MetalEvent = {
      type: 'NodeOperationFailed',
      data: { nodeId: n, operation: 'release', workflowId: 'wf-00000000000a', reason: 'no wipe', failedStep: 'disk.wipe', maintenance: true },
    };
    given([enrolled, failedRelease]).when(reportBmcHealth, { nodeId: n, reachable: true }).then([]);
    given([enrolled, maintenance(true, 'bmc')])
      .when(reportBmcHealth, lostReport)
      .then([]);
    given([enrolled]).when(reportBmcHealth, { nodeId: n, reachable: true }).then([]);
  });

  it('refuses an unknown node', () => {
    given([]).when(reportBmcHealth, lostReport).thenRejects('NOT_FOUND');
  });
});
