import type { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { deployBody, enrollPayload } from './commandPayloads.ts';

/** Site `siteId` and node `nodeId`, deployed through the engine's own commands (no workflow runs): returns the last sequence. */
export async function deployedNode(bus: CommandBus, nodeId: string, siteId = 'dc1'): Promise<number> {
  const run = (name: string, payload: unknown) => bus.execute({ name, payload, actor: 'test' });
  await run('site.create', { siteId, name: siteId });
  await run('metal.enroll', enrollPayload(nodeId, siteId));
  const workflowOf = (result: Awaited<ReturnType<typeof run>>) => (result.events[0]!.data as { workflowId: string }).workflowId;
  await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.startInspection', { nodeId })) });
  const deployed = await run('metal.completeOperation', { nodeId, workflowId: workflowOf(await run('metal.deploy', deployBody(nodeId))) });
  return deployed.seq;
}
