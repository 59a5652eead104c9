import { describe, expect, it } from 'vitest';

import { RedfishErrorCodes } from '../../daemon/redfish/index.ts';
import { permanentAgentFailures } from '../../schemas/agent/permanentFailures.ts';

describe('permanent agent failures', () => {
  it('name only codes the Redfish client reports, and leave the transient ones to be retried', () => {
    for (const code of permanentAgentFailures) expect(Object.keys(RedfishErrorCodes)).toContain(code);
    for (const code of ['REDFISH_UNAVAILABLE', 'REDFISH_TIMEOUT', 'REDFISH_TASK_FAILED', 'REDFISH_BIOS_NOT_APPLIED']) {
      expect(permanentAgentFailures.has(code)).toBe(false);
    }
  });
});
