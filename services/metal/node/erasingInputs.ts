import type { AggregateLoader } from '../../platform/commands/commandDefinition.ts';
import { poolRef } from '../../../schemas/vps/poolState.ts';
import { AGENTLESS_INPUT, WIPE_METHOD_INPUT } from '../profiles/builtin.ts';
import { isAgentless, nodeAggregate, type NodeAggregateState } from './node.ts';

/** The inputs of an erasing operation (release, retire): how the node's pool wipes, or that no ramdisk ever boots. */
export async function erasingInputs(nodeId: string, load: AggregateLoader): Promise<Record<string, unknown>> {
  const node: NodeAggregateState = await load(nodeAggregate, nodeId);
  if (!node.exists) return {};
  // No ramdisk ever boots on an agentless node: `workflow.start` picks the built-in profile that only acts over Redfish.
  if (isAgentless(node)) return { [AGENTLESS_INPUT]: true };
  const pool = node.poolId === undefined ? undefined : await load(poolRef, node.poolId);
  const wipeMethod = pool?.exists ? pool.policy.wipeMethod : undefined;
  return wipeMethod ? { [WIPE_METHOD_INPUT]: wipeMethod } : {};
}
