import { describe, expect, it } from 'vitest';

import { isRedfishError } from '../../daemon/redfish/index.ts';
import { clientFor, failureOf, requestsTo, simulate, trees } from './harness.ts';

const firmware = 'http://127.0.0.1:9/firmware/bmc-2.47.fwpkg';
const simpleUpdateUri = '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate';

describe.each(trees)('SimpleUpdate on $tree', (facts) => {
  it('posts the image and follows the task until Completed', async () => {
    const sim = await simulate(facts.tree, { taskDurationMs: 80 });
    const result = await clientFor(sim).simpleUpdate(firmware);
    expect(result.taskUri).toMatch(/^\/redfish\/v1\/TaskService\/Tasks\/\d+$/);
    // iLO lists TransferProtocol inline, the DMTF tower in SimpleUpdateActionInfo: both say HTTP is fine.
    expect(requestsTo(sim, 'POST', simpleUpdateUri).map((r) => r.body)).toEqual([{ ImageURI: firmware, TransferProtocol: 'HTTP' }]);
    expect(requestsTo(sim, 'GET', result.taskUri ?? '').length).toBeGreaterThan(1);
    expect(sim.state.appliedFirmware).toEqual([firmware]);
    expect(sim.resource(result.taskUri ?? '')).toMatchObject({ TaskState: 'Completed', PercentComplete: 100 });
  });

  it.each(['Exception', 'Killed'] as const)('reports REDFISH_TASK_FAILED when the task ends %s', async (taskOutcome) => {
    const sim = await simulate(facts.tree, { taskDurationMs: 30, taskOutcome });
    const error = await failureOf(clientFor(sim).simpleUpdate(firmware));
    expect(isRedfishError(error, 'REDFISH_TASK_FAILED')).toBe(true);
    expect((error as Error).message).toContain(taskOutcome);
    expect(sim.state.appliedFirmware).toEqual([]);
  });

  it('refuses a transfer protocol the BMC does not list', async () => {
    const sim = await simulate(facts.tree);
    const error = await failureOf(clientFor(sim).simpleUpdate('nfs://127.0.0.1/fw.bin'));
    expect(isRedfishError(error, 'REDFISH_UNSUPPORTED')).toBe(true);
    expect(requestsTo(sim, 'POST', simpleUpdateUri)).toEqual([]);
  });
});
