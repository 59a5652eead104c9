import { createToken } from '../auth/token/create.ts';
import { revokeToken } from '../auth/token/revoke.ts';
import { cancelNode } from '../metal/node/cancel.ts';
import { completeCancel } from '../metal/node/completeCancel.ts';
import { enrollNode } from '../metal/node/enroll.ts';
import { deployNode } from '../metal/node/deploy.ts';
import { rescueNode } from '../metal/node/rescue.ts';
import { retireNode } from '../metal/node/retire.ts';
import { retryNode } from '../metal/node/retry.ts';
import { remediateNode } from '../workflow/remediate.ts';
import { inspectNode } from '../metal/node/inspect.ts';
import { startInspection } from '../metal/node/startInspection.ts';
import { undeployNode } from '../metal/node/undeploy.ts';
import { unrescueNode } from '../metal/node/unrescue.ts';
import { reportBmcHealth } from '../metal/node/reportBmcHealth.ts';
import { setMaintenance } from '../metal/node/setMaintenance.ts';
import { setLabels } from '../metal/node/setLabels.ts';
import { completeOperation } from '../metal/node/completeOperation.ts';
import { failOperation } from '../metal/node/failOperation.ts';
import { markWiping } from '../metal/node/markWiping.ts';
import { recordInventory } from '../metal/node/recordInventory.ts';
import { claimIdentity } from '../metal/identity/claimIdentity.ts';
import { startWorkflow } from '../workflow/workflow/start.ts';
import { cancelWorkflow } from '../workflow/workflow/cancel.ts';
import { completeStep } from '../workflow/workflow/completeStep.ts';
import { failStep } from '../workflow/workflow/failStep.ts';
import { rejectResult } from '../workflow/workflow/rejectResult.ts';
import { countRejectedResults } from '../workflow/workflow/countRejectedResults.ts';
import { startStep } from '../workflow/workflow/startStep.ts';
import { deleteSecret } from '../secrets/secret/delete.ts';
import { putSecret } from '../secrets/secret/put.ts';
import { createSite } from '../site/site/create.ts';
import { registerAgent } from '../trust/agent/register.ts';
import { rotateAgentKey } from '../trust/agent/rotateKey.ts';
import { createJoinToken, createSiteToken } from '../trust/joinToken/create.ts';
import { contestBoot } from '../trust/ramdiskBoot/contestBoot.ts';
import { recordBootToken } from '../trust/ramdiskBoot/recordBootToken.ts';
import { useJoinToken } from '../trust/joinToken/use.ts';
import { countRefusals } from '../trust/refusals/countRefusals.ts';
import { approveBatch } from '../workflow/workflow/approve.ts';
import { rejectBatch } from '../workflow/workflow/reject.ts';
import { setApprovers } from '../trust/approvers/setApprovers.ts';
import { publisherCommands } from '../fleet/publishers/publisherCommands.ts';
import { publishModuleVersion } from '../fleet/module/publishVersion.ts';
import { defineTemplate } from '../fleet/template/defineTemplate.ts';
import { assignmentCommands } from '../fleet/assignment/assignmentCommands.ts';
import { startRollout } from '../fleet/rollout/startRollout.ts';
import { approveRollout } from '../fleet/rollout/approveRollout.ts';
import { expireRolloutApproval, rejectRollout } from '../fleet/rollout/rolloutVerdicts.ts';
import { rolloutOperatorCommands } from '../fleet/rollout/operatorCommands.ts';
import { rolloutControllerCommands } from '../fleet/rollout/controllerCommands.ts';
import { createProviderAccount } from '../vps/account/create.ts';
import { createFlavor, mapFlavor } from '../vps/flavor/create.ts';
import { deleteInstance, startInstance, stopInstance } from '../vps/instance/desiredState.ts';
import { recordInstanceObserved } from '../vps/instance/observe.ts';
import { completeInstanceRemediation, failInstanceRemediation } from '../vps/instance/remediation.ts';
import { remediateInstance } from '../workflow/remediateInstance.ts';
import { createPool } from '../vps/pool/create.ts';
import { offerPool, withdrawPool } from '../vps/pool/offer.ts';
import { createTenant, setQuota } from '../vps/tenant/create.ts';
import { setTenantCaps } from '../vps/tenant/setCaps.ts';
import { createInstance } from '../vps/tenant/createInstance.ts';
import { releaseQuota } from '../vps/tenant/releaseQuota.ts';
import { placeHold } from '../vps/hold/place.ts';
import { releaseHold } from '../vps/hold/release.ts';
import { placeInstance } from '../vps/hold/placeInstance.ts';
import { unplaceInstance } from '../vps/hold/unplaceInstance.ts';
import { requestRelocation } from '../vps/hold/requestRelocation.ts';
import { relocateInstance } from '../vps/hold/relocateInstance.ts';
import { markWarmSlotReady, placeWarmSlot, reapWarmSlot } from '../vps/hold/warmSlots.ts';
import { setWarmPool } from '../vps/pool/setWarm.ts';
import { registerPlugin } from '../plugins/registry/register.ts';
import { autonomyApprovalCommands, autonomyEngineCommands, autonomyOperatorCommands } from '../autonomy/commands.ts';
import { isInProcessOnly, type CommandExposure } from '../../schemas/commandExposure.ts';
import type { CommandDefinition } from '../platform/commands/commandDefinition.ts';

/**
 * The command catalog: every command the control plane accepts. It lives in a composition root (the API's; `services/stack` hands it to the other processes) because it is the
 * one place that knows every module's deciders; engine and modules get the commands they need handed to them.
 */
export const allCommands: readonly CommandDefinition[] = [
  createSite,
  enrollNode,
  setMaintenance,
  setLabels,
  deployNode,
  undeployNode,
  rescueNode,
  unrescueNode,
  retireNode,
  retryNode,
  remediateNode,
  cancelNode,
  inspectNode,
  startInspection,
  completeOperation,
  completeCancel,
  failOperation,
  markWiping,
  recordInventory,
  claimIdentity,
  reportBmcHealth,
  startWorkflow,
  startStep,
  completeStep,
  failStep,
  cancelWorkflow,
  rejectResult,
  countRejectedResults,
  registerAgent,
  rotateAgentKey,
  createJoinToken,
  recordBootToken,
  contestBoot,
  createSiteToken,
  useJoinToken,
  countRefusals,
  putSecret,
  deleteSecret,
  createToken,
  revokeToken,
  setApprovers,
  ...publisherCommands,
  publishModuleVersion,
  approveBatch,
  rejectBatch,
  createTenant,
  setQuota,
  setTenantCaps,
  createInstance,
  releaseQuota,
  placeHold,
  releaseHold,
  placeInstance,
  unplaceInstance,
  requestRelocation,
  relocateInstance,
  placeWarmSlot,
  markWarmSlotReady,
  reapWarmSlot,
  createPool,
  setWarmPool,
  offerPool,
  withdrawPool,
  createFlavor,
  mapFlavor,
  createProviderAccount,
  startInstance,
  stopInstance,
  deleteInstance,
  recordInstanceObserved,
  remediateInstance,
  completeInstanceRemediation,
  failInstanceRemediation,
  registerPlugin,
  defineTemplate,
  ...assignmentCommands,
  startRollout,
  approveRollout,
  rejectRollout,
  expireRolloutApproval,
  ...rolloutOperatorCommands,
  ...rolloutControllerCommands,
  ...autonomyEngineCommands,
  ...autonomyOperatorCommands,
  ...autonomyApprovalCommands,
];

/**
 * The views below are derived from each command's `exposure` (schemas/commandExposure.ts); there is no other list of
 * who may send what. Each names the process that uses it.
 */
const exposedTo = (...senders: CommandExposure[]) => allCommands.filter((c) => c.exposure.some((sender) => senders.includes(sender)));

/** Commands the engine (workflow, BMC monitor, VPS reconciler, plugins) sends over NATS; never operator HTTP commands. */
export const engineCommandNames: ReadonlySet<string> = new Set(exposedTo('engine').map((c) => c.name));

/**
 * Commands the HTTP API sends itself from its own routes (`/v1/secrets`, `/v1/tokens`, `/v1/approvals`), never as
 * `POST /v1/commands/<name>`: the operator sends the plaintext to the secrets route, which seals it before the command
 * exists, a token's secret is made by the tokens route, which sends only its hash, and approvals go through
 * `/v1/approvals`, where only approvers may send them.
 */
export const edgeCommands: readonly CommandDefinition[] = exposedTo('edge', 'approver');

/**
 * Join-token commands: minted by an issuer that keeps the secret (`services/trust/joinToken/mint.ts`) and spent only by
 * the join service. Not operator HTTP commands: a token must be minted where its secret is generated.
 */
export const joinTokenCommands: readonly CommandDefinition[] = exposedTo('join');

/**
 * Names of the commands that mint or hold credentials or decide whom the platform trusts (`isInProcessOnly`): the
 * NATS responder refuses them whatever its bus holds.
 */
export const inProcessOnlyCommandNames: ReadonlySet<string> = new Set(allCommands.filter((c) => isInProcessOnly(c.exposure)).map((c) => c.name));

/**
 * What the `commands` service answers on `bc.cmd.*`: everything but what an agent sends about itself (`agent.register`
 * goes on its own registration subject, `services/trust/agent/registrationService.ts`, so the broker binds it to the
 * asking agent). Its in-process-only commands are refused by name (`serveCommands`).
 */
export const busCommands: readonly CommandDefinition[] = allCommands.filter((c) => !c.exposure.includes('agent'));

/** What operators, admins and tenants may send as `POST /v1/commands/<name>` (the role check narrows it per caller). */
export const operatorCommands: readonly CommandDefinition[] = exposedTo('operator', 'tenant', 'admin');

/** The node and VPS verbs a tenant may send; the deciders check it is the tenant's own node or instance. */
export const tenantCommandNames: ReadonlySet<string> = new Set(exposedTo('tenant').map((c) => c.name));

/** Commands only an admin may send (`pki.setApprovers`: who approves is not decided by who operates). */
export const adminOnlyCommandNames: ReadonlySet<string> = new Set(
  allCommands.filter((c) => c.exposure.every((sender) => sender === 'admin')).map((c) => c.name),
);
