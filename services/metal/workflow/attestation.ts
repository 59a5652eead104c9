import type { Inventory } from '../../../daemon/redfish/inventory.ts';
import type { AgentCommand, AgentCommandKind } from '../../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult } from '../../../schemas/agent/agentResultCodec.ts';
import { stepAttemptId } from '../../../schemas/metal/workflow.ts';
import type { AggregateLoader } from '../../commands/commandDefinition.ts';
import { agentAggregate, type AgentState } from '../../trust/agent/agent.ts';
import type { WipeReport } from '../../../schemas/agent/diskWipe.ts';
import { wipeCoverage } from './wipeCoverage.ts';
import type { ExistingWorkflow } from './workflow.ts';

/** Loads the agent a signed result names, so the decider can check the signature against its registered key. */
export async function signerOf(signedResult: string | undefined, load: AggregateLoader): Promise<AgentState | undefined> {
  if (!signedResult) return undefined;
  try {
    return await load(agentAggregate, decodeSignedResult(Buffer.from(signedResult, 'base64')).result.agentId);
  } catch {
    return undefined;
  }
}

/** A wipe step's verdict: the signed report it attests, or why it attests nothing. */
export type WipeAttestation = { readonly attested: true; readonly report: WipeReport } | { readonly attested: false; readonly reason: string };

/**
 * Whether `signedResult` attests this step attempt's wipe: a successful result of exactly this agent command,
 * signed by the key registered for an agent allowed to run it on this node, whose wiped disks cover every drive of
 * the node's `inventory` (`wipeCoverage`). This is the only way a wipe becomes attested: an executor (or anyone else
 * who can send commands) cannot simply claim it, and a signature over a wipe of the wrong disks is not enough.
 */
export function attests(
  wf: ExistingWorkflow,
  stepIndex: number,
  attempt: number,
  signedResult: string | undefined,
  signer: AgentState | undefined,
  inventory: Inventory | null | undefined,
): WipeAttestation {
  if (!signedResult || !signer?.exists) return { attested: false, reason: 'no signed wipe result from a registered agent' };
  const step = wf.steps[stepIndex]!;
  const command: AgentCommand = {
    commandId: stepAttemptId(wf.workflowId, stepIndex, attempt),
    kind: step.id as AgentCommandKind,
    siteId: wf.siteId,
    nodeId: wf.nodeId,
    workflowId: wf.workflowId,
    stepIndex,
    attempt,
    destructive: step.destructive,
    params: step.params,
    issuedAt: wf.startedAt,
    notAfter: wf.startedAt,
  };
  const verdict = verifyAgentResult(Buffer.from(signedResult, 'base64'), command, (id) => (id === signer.agentId ? signer : undefined));
  if (!verdict.ok) return { attested: false, reason: `the wipe result does not verify (${verdict.reason})` };
  if (!verdict.result.ok) return { attested: false, reason: `the wipe failed (${verdict.result.errorCode})` };
  const coverage = wipeCoverage(verdict.result.payload, inventory);
  return coverage.covered ? { attested: true, report: coverage.report } : { attested: false, reason: coverage.reason };
}
