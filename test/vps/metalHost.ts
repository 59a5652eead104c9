import { deployBody, enrollPayload } from '../support/commandPayloads.ts';
import { fakeInventoryOf } from '../metal/fakeAgent.ts';

const GIB = 1_024 ** 3;

type Run = (name: string, payload: unknown) => Promise<{ events: readonly { data: unknown }[] }>;

/**
 * Enrols, inspects and deploys `nodeId` through the commands, then records an inventory of `cores` cores, 32 GiB and
 * one 500 GiB disk: a deployed host that metal-pool placement can put instances on.
 */
export async function deployMetalHost(run: Run, nodeId: string, cores: number, mac: string): Promise<void> {
  const workflowOf = (result: Awaited<ReturnType<Run>>) => (result.events[0]!.data as { workflowId: string }).workflowId;
  await run('metal.enroll', { ...enrollPayload(nodeId), macs: [mac] });
  await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.startInspection', { nodeId })) });
  await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.deploy', deployBody(nodeId))) });
  const inventory = {
    ...fakeInventoryOf(nodeId),
    cpus: { count: 1, model: null, cores },
    memoryMiB: 32_768,
    disks: [{ id: 'd0', sizeBytes: 500 * GIB, model: null, serial: null }],
  };
  await run('metal.recordInventory', { nodeId, workflowId: 'wf-00000000000a', inventory });
}
