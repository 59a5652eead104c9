import type { Inventory } from '../../../schemas/metal/inventory.ts';
import { commandNonce, type AgentCommand } from '../../../schemas/agent/agentCommand.ts';
import { decodeSignedResult, verifyAgentResult } from '../../../schemas/agent/agentResultCodec.ts';
import type { WipeReport } from '../../../schemas/agent/diskWipe.ts';
import { stepAttemptId } from '../../../schemas/metal/workflow.ts';
import type { AggregateLoader } from '../../platform/commands/commandDefinition.ts';
import { agentRef, type AgentState } from '../../../schemas/trust/agentState.ts';
import { wipeCoverage } from './wipeCoverage.ts';
import type { ExistingWorkflow } from './workflow.ts';

/** Loads the agent a signed result names, so the decider can check the signature against its registered key. */
export async function signerOf(signedResult: string | undefined, load: AggregateLoader): Promise<AgentState | undefined> {
  if (!signedResult) return undefined;
  try {
    return await load(agentRef, decodeSignedResult(Buffer.from(signedResult, 'base64')).result.agentId);
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

/** A wipe step's verdict: the signed report it attests and the ramdisk that signed it, or why it attests nothing. */
export type WipeAttestation =
  { readonly attested: true; readonly report: WipeReport; readonly agentId: string } | { readonly attested: false; readonly reason: string };

/**
 * Whether `signedResult` attests this step attempt's wipe: a successful result of exactly this agent command (its
 * attempt's nonce included), signed by the ramdisk this workflow booted, whose wiped disks cover every drive of the
 * node's `inventory` (`wipeCoverage`). This is the only way a wipe becomes attested: an executor, an installed host's
 * node agent or anyone else who can send commands cannot simply claim it, a result made before the command cannot
 * answer it, and a signature over a wipe of the wrong disks is not enough.
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
  const ramdisk = bootedRamdiskOf(wf, stepIndex);
  if (signer.role !== 'ramdisk' || signer.agentId !== ramdisk) {
    return { attested: false, reason: `the wipe result is signed by ${signer.agentId}, not by the ramdisk this workflow booted` };
  }
  const attemptNonce = wf.progress[stepIndex]?.nonce;
  if (!attemptNonce) return { attested: false, reason: 'the attempt has no command nonce to answer' };
  const step = wf.steps[stepIndex]!;
  const commandId = stepAttemptId(wf.workflowId, stepIndex, attempt);
  const command: AgentCommand = {
    commandId,
    // Only a `disk.wipe` result carries a wipe report: what any step that attests a wipe sends, whatever its id.
    kind: 'disk.wipe',
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
  if (!verdict.ok) return { attested: false, reason: `the wipe result does not verify (${verdict.reason})` };
  if (!verdict.result.ok) return { attested: false, reason: `the wipe failed (${verdict.result.errorCode})` };
  const coverage = wipeCoverage(verdict.result.payload, inventory);
  return coverage.covered ? { attested: true, report: coverage.report, agentId: signer.agentId } : { attested: false, reason: coverage.reason };
}
