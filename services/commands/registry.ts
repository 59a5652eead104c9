import { createToken } from '../auth/token/create.ts';
import { revokeToken } from '../auth/token/revoke.ts';
import { cancelNode, completeCancel } from '../metal/node/cancel.ts';
import { enrollNode } from '../metal/node/enroll.ts';
import { deployNode, rescueNode, retireNode, retryNode, startInspection, undeployNode, unrescueNode } from '../metal/node/operate.ts';
import { reportBmcHealth } from '../metal/node/reportBmcHealth.ts';
import { setMaintenance } from '../metal/node/setMaintenance.ts';
import { completeOperation, failOperation, markWiping, recordInventory } from '../metal/node/workflowOutcome.ts';
import { startWorkflow } from '../metal/workflow/start.ts';
import { cancelWorkflow } from '../metal/workflow/cancel.ts';
import { completeStep, failStep, rejectResult, startStep } from '../metal/workflow/steps.ts';
import { deleteSecret } from '../secrets/secret/delete.ts';
import { putSecret } from '../secrets/secret/put.ts';
import { createSite } from '../site/site/create.ts';
import { registerAgent } from '../trust/agent/register.ts';
import { createJoinToken, createSiteToken } from '../trust/joinToken/create.ts';
import { useJoinToken } from '../trust/joinToken/use.ts';
import { approveBatch, rejectBatch } from '../metal/workflow/approval.ts';
import { setApprovers } from '../trust/approvers/setApprovers.ts';
import { createProviderAccount } from '../vps/account/create.ts';
import { createFlavor, mapFlavor } from '../vps/flavor/create.ts';
import { deleteInstance, startInstance, stopInstance } from '../vps/instance/desiredState.ts';
import { recordInstanceObserved } from '../vps/instance/observe.ts';
import { createPool } from '../vps/pool/create.ts';
import { offerPool, withdrawPool } from '../vps/pool/offer.ts';
import { createTenant, setQuota } from '../vps/tenant/create.ts';
import { createInstance } from '../vps/tenant/createInstance.ts';
import { markQuotaUsed, releaseQuota } from '../vps/tenant/quota.ts';
import { registerPlugin } from '../plugins/registry/register.ts';
import { autonomyApprovalCommands, autonomyEngineCommands, autonomyOperatorCommands } from '../autonomy/commands.ts';
import type { CommandDefinition } from './commandDefinition.ts';

/** Every command the control plane accepts, by name. */
export const allCommands: readonly CommandDefinition[] = [
  createSite,
  enrollNode,
  setMaintenance,
  deployNode,
  undeployNode,
  rescueNode,
  unrescueNode,
  retireNode,
  retryNode,
  cancelNode,
  startInspection,
  completeOperation,
  completeCancel,
  failOperation,
  markWiping,
  recordInventory,
  reportBmcHealth,
  startWorkflow,
  startStep,
  completeStep,
  failStep,
  cancelWorkflow,
  rejectResult,
  registerAgent,
  createJoinToken,
  createSiteToken,
  useJoinToken,
  putSecret,
  deleteSecret,
  createToken,
  revokeToken,
  setApprovers,
  approveBatch,
  rejectBatch,
  createTenant,
  setQuota,
  createInstance,
  releaseQuota,
  markQuotaUsed,
  createPool,
  offerPool,
  withdrawPool,
  createFlavor,
  mapFlavor,
  createProviderAccount,
  startInstance,
  stopInstance,
  deleteInstance,
  recordInstanceObserved,
  registerPlugin,
  ...autonomyEngineCommands,
  ...autonomyOperatorCommands,
  ...autonomyApprovalCommands,
];

/**
 * Commands only the workflow engine sends (over NATS). They are in `allCommands` because the `commands` service must
 * answer them; an HTTP API that serves operators should leave them out.
 */
export const engineCommandNames: ReadonlySet<string> = new Set([
  startInspection.name,
  completeOperation.name,
  failOperation.name,
  completeCancel.name,
  markWiping.name,
  recordInventory.name,
  reportBmcHealth.name,
  startWorkflow.name,
  startStep.name,
  completeStep.name,
  failStep.name,
  cancelWorkflow.name,
  rejectResult.name,
  releaseQuota.name,
  markQuotaUsed.name,
  recordInstanceObserved.name,
  ...autonomyEngineCommands.map((c) => c.name),
  // A plugin process announces itself over NATS with its own credentials, not through the operator API.
  registerPlugin.name,
]);

/**
 * Commands the HTTP API sends itself from its own routes (`/v1/secrets`, `/v1/tokens`), never as
 * `POST /v1/commands/<name>`: the operator sends the plaintext to the secrets route, which seals it before the command
 * exists, a token's secret is made by the tokens route, which sends only its hash, and approvals go through
 * `/v1/approvals`, where only approvers may send them.
 */
export const edgeCommands: readonly CommandDefinition[] = [putSecret, deleteSecret, createToken, revokeToken, approveBatch, rejectBatch, ...autonomyApprovalCommands];

/**
 * Join-token commands: minted by an issuer that keeps the secret (`services/trust/joinToken/mint.ts`) and spent only by
 * the join service. Not operator HTTP commands: a token must be minted where its secret is generated.
 */
export const joinTokenCommands: readonly CommandDefinition[] = [createJoinToken, createSiteToken, useJoinToken];

/**
 * Commands that mint or hold credentials or decide whom the platform trusts: `auth.*` (API tokens), `secrets.*`,
 * `pki.*` and `siteTokens.*` (join tokens, approvers) and the approvals. They are never served over NATS, where
 * without broker auth anyone could send them and no message says who did: only an in-process bus of a process that
 * authenticated its caller runs them (the API for operators and approvers, `join` for joiners, the step executor and
 * plugin runtime for a step's join tokens, the simulated site for its own BMC secrets and site token).
 */
export const inProcessOnlyCommands: readonly CommandDefinition[] = [...edgeCommands, ...joinTokenCommands, setApprovers];

/** Names of `inProcessOnlyCommands`, for the NATS responder to refuse. */
export const inProcessOnlyCommandNames: ReadonlySet<string> = new Set(inProcessOnlyCommands.map((c) => c.name));

/**
 * What the `commands` service answers on `bc.cmd.*`: everything but `agent.register`, which an agent sends on its own
 * registration subject (`services/trust/agent/registrationService.ts`) so the broker binds it to the asking agent, and
 * the join service sends in-process with the token it spent.
 */
export const busCommands: readonly CommandDefinition[] = allCommands.filter((c) => c !== registerAgent);

/** What operators may send over the HTTP API: everything but the engine's commands, agent registration and edge commands. */
export const operatorCommands: readonly CommandDefinition[] = allCommands.filter(
  (c) => !engineCommandNames.has(c.name) && c.name !== registerAgent.name && !edgeCommands.includes(c) && !joinTokenCommands.includes(c),
);
