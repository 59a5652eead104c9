import type { AgentCommand, AgentCommandKind } from '../../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult } from '../../../schemas/agent/agentResultCodec.ts';
import { stepAttemptId } from '../../../schemas/metal/workflow.ts';
import type { AggregateLoader } from '../../commands/commandDefinition.ts';
import { agentAggregate, type AgentState } from '../../trust/agent/agent.ts';
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

/**
 * True when `signedResult` is a successful result of exactly this step attempt's agent command, signed by the key
 * registered for an agent allowed to run it on this node. This is the only way a wipe becomes attested: an
 * executor (or anyone else who can send commands) cannot simply claim it.
 */
export function attests(wf: ExistingWorkflow, stepIndex: number, attempt: number, signedResult: string | undefined, signer: AgentState | undefined): boolean {
  if (!signedResult || !signer?.exists) return false;
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
  return verdict.ok && verdict.result.ok;
}
