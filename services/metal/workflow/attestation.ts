import { commandNonce, type AgentCommand, type AgentCommandKind } from '../../../schemas/agent/agentCommand.ts';
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
 * The ramdisk of the node's current boot, as this workflow knows it: the agent its latest `wait.agentJoined` (role
 * ramdisk) before `stepIndex` saw join. Undefined when no ramdisk joined this workflow before that step.
 */
export function bootedRamdiskOf(wf: ExistingWorkflow, stepIndex: number): string | undefined {
  for (let i = stepIndex - 1; i >= 0; i--) {
    const step = wf.steps[i]!;
    const p = wf.progress[i];
    if (step.id !== 'wait.agentJoined' || p?.status !== 'succeeded') continue;
    if (((step.params as { role?: unknown }).role ?? 'ramdisk') !== 'ramdisk') continue;
    const agentId = (p.output as { agentId?: unknown } | null)?.agentId;
    return typeof agentId === 'string' ? agentId : undefined;
  }
  return undefined;
}

/**
 * True when `signedResult` is a successful result of exactly this step attempt's agent command, signed by the key
 * registered for an agent allowed to run it on this node. This is the only way a wipe becomes attested: an
 * executor (or anyone else who can send commands) cannot simply claim it.
 */
export function attests(wf: ExistingWorkflow, stepIndex: number, attempt: number, signedResult: string | undefined, signer: AgentState | undefined): boolean {
  if (!signedResult || !signer?.exists) return false;
  // Only the ramdisk this workflow booted speaks for the disk: never an installed host's node agent, nor another boot.
  const ramdisk = bootedRamdiskOf(wf, stepIndex);
  if (signer.role !== 'ramdisk' || signer.agentId !== ramdisk) return false;
  // The result must cover the nonce of the command the executor sent in this attempt: one made earlier cannot.
  const attemptNonce = wf.progress[stepIndex]?.nonce;
  if (!attemptNonce) return false;
  const step = wf.steps[stepIndex]!;
  const commandId = stepAttemptId(wf.workflowId, stepIndex, attempt);
  const command: AgentCommand = {
    commandId,
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
    nonce: commandNonce(attemptNonce, commandId),
    agentId: ramdisk,
  };
  const verdict = verifyAgentResult(Buffer.from(signedResult, 'base64'), command, (id) => (id === signer.agentId ? signer : undefined));
  return verdict.ok && verdict.result.ok;
}
