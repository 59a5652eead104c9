/**
 * The API's shapes, as the zod schemas in `schemas/` define them: the console declares none of its own. Type-only, so
 * nothing of the server reaches the bundle.
 */
export type { CommandResult, Problem } from '../../../../../schemas/api.ts';
export type { SessionView } from '../../../../../schemas/auth/views.ts';
export type { Role } from '../../../../../schemas/auth/roles.ts';
export type { StoredEvent } from '../../../../../schemas/envelope.ts';
export type { FleetSummary, NodeCounts } from '../../../../../schemas/metal/fleetViews.ts';
export type { NodeAtInstant, NodeHistory, NodeHistoryEntry } from '../../../../../schemas/metal/nodeHistory.ts';
export type { NodeState } from '../../../../../schemas/metal/nodeState.ts';
export type { NodeRowView, NodeView } from '../../../../../schemas/metal/views.ts';
export type { WorkflowStepView, WorkflowView } from '../../../../../schemas/metal/workflowViews.ts';
export type { TrendsView } from '../../../../../schemas/metal/trendViews.ts';
export type { DeployNode } from '../../../../../schemas/metal/nodeCommands.ts';
export type { SetMaintenance } from '../../../../../schemas/metal/nodeCommands.ts';
export type { AllocateNode, PoolOffer } from '../../../../../schemas/metal/poolViews.ts';
export type { ApprovalView } from '../../../../../schemas/metal/approvalViews.ts';
export type { ApproveBatch, RejectBatch } from '../../../../../schemas/metal/workflowCommands.ts';
export type { InstanceView, QuotaView, TenantView } from '../../../../../schemas/vps/views.ts';
export type { PluginView, ProfileValidation, ProfileView } from '../../../../../schemas/plugins/views.ts';
export type { SiteView } from '../../../../../schemas/site/views.ts';
export type { NodeLogEntry, NodeLogPage } from '../../../../../schemas/agent/nodeLog.ts';
export type { BudgetView, ControlsView, DecisionView, PolicyView } from '../../../../../schemas/autonomy/views.ts';
export type { ApproveDecision, RejectDecision } from '../../../../../schemas/autonomy/decisionCommands.ts';
export type { AssignmentView, ModuleVersionView, ModuleView, PublisherView, TemplateView } from '../../../../../schemas/fleet/views.ts';
export type { RolloutDetailView, RolloutHostView, RolloutStatus, RolloutView } from '../../../../../schemas/fleet/rolloutViews.ts';
export type { HostOutcome } from '../../../../../schemas/fleet/rolloutWaves.ts';
export type { RolloutVerb } from '../../../../../schemas/fleet/rolloutVerbs.ts';

import type { z } from 'zod';
import type { pageOf } from '../../../../../schemas/api.ts';
import type { NodeRowView as NodeRowViewSchema, NodeView as NodeViewSchema } from '../../../../../schemas/metal/views.ts';
import type { WorkflowView as WorkflowViewSchema } from '../../../../../schemas/metal/workflowViews.ts';

/** A page of `GET /v1/nodes` (`pageOf(NodeView)`). */
export type NodePage = z.infer<ReturnType<typeof pageOf<typeof NodeViewSchema>>>;
/** A page of `GET /v1/nodes?view=row` (`pageOf(NodeRowView)`). */
export type NodeRowPage = z.infer<ReturnType<typeof pageOf<typeof NodeRowViewSchema>>>;
/** A page of `GET /v1/workflows` (`pageOf(WorkflowView)`). */
export type WorkflowPage = z.infer<ReturnType<typeof pageOf<typeof WorkflowViewSchema>>>;
/** What `POST /v1/autonomy/decisions/:id/approve|reject` answers. */
export interface DecisionVerdict {
  readonly decisionId: string;
  readonly seq: number;
  readonly duplicate: boolean;
  readonly events: string[];
}
