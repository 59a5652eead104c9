import type {
  ApprovalView,
  AssignmentView,
  ModuleVersionView,
  ModuleView,
  PublisherView,
  RolloutDetailView,
  RolloutStatus,
  RolloutVerb,
  RolloutView,
  TemplateView,
  ApproveDecision,
  BudgetView,
  ApproveBatch,
  CommandResult,
  ControlsView,
  DecisionVerdict,
  DecisionView,
  FleetSummary,
  InstanceView,
  NodeHistory,
  NodeLogPage,
  NodePage,
  NodeRowPage,
  NodeState,
  NodeView,
  PluginView,
  AllocateNode,
  PoolOffer,
  PolicyView,
  Problem,
  ProfileValidation,
  ProfileView,
  RejectBatch,
  RejectDecision,
  SessionView,
  SiteView,
  TenantView,
  TrendsView,
  WorkflowPage,
  WorkflowView,
} from './shapes.ts';

/** A refusal from the API: its problem `code` (`schemas/errorCodes.ts`) and message, as the console shows them. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: Problem['code'] | 'NETWORK',
    message: string,
    readonly issues: Problem['issues'] = undefined,
  ) {
    super(message);
  }
}

type Query = { readonly [key: string]: string | number | undefined | null };

/** What `GET /v1/nodes` filters on (empty: any). */
export type NodeFilter = {
  siteId?: string;
  state?: NodeState | '';
  poolId?: string;
  tenantId?: string;
  /** Part of a node id, MAC, address or serial. */
  q?: string;
};

const withQuery = (path: string, query: Query = {}): string => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
};

/**
 * Every call the console makes, over the `/v1` API with the signed-in token: the API decides what the role may see
 * and do. A 401 (token expired or revoked) calls `onUnauthorized`, which returns the user to sign-in.
 */
export class ApiClient {
  /**
   * The furthest log position this session's own writes reached. Every read that can wait (`minSeq`) waits for it,
   * so a page opened right after a command (the node a tenant just took) never shows the world before it.
   */
  private wroteUpTo = 0;

  constructor(
    readonly token: string,
    private readonly onUnauthorized: () => void,
  ) {}

  /** The token no longer holds (the event stream said so): back to sign-in. */
  unauthorized(): void {
    this.onUnauthorized();
  }

  /** The fetch every call (and the event stream) goes through: bearer token, problem+json errors, 401 handling. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.token}`);
    let res: Response;
    try {
      res = await fetch(path, { ...init, headers });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new ApiError(0, 'NETWORK', `the API did not answer: ${(err as Error).message}`);
    }
    if (res.ok) return res;
    const problem = (await res.json().catch(() => null)) as Partial<Problem> | null;
    if (res.status === 401) this.onUnauthorized();
    throw new ApiError(res.status, problem?.code ?? 'INTERNAL', problem?.detail ?? res.statusText, problem?.issues);
  }

  private async get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return (await this.fetch(withQuery(path, query), signal ? { signal } : {})).json() as Promise<T>;
  }

  /** A read model's answer, once it has applied `minSeq` and everything this session wrote. */
  private readModel<T>(path: string, query: Query & { minSeq?: number | undefined }, signal?: AbortSignal): Promise<T> {
    return this.get<T>(path, { ...query, minSeq: Math.max(query.minSeq ?? 0, this.wroteUpTo) || undefined }, signal);
  }

  private async post<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const result = (await (await this.fetch(path, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as T;
    const seq = (result as { seq?: unknown } | null)?.seq;
    if (typeof seq === 'number') this.wroteUpTo = Math.max(this.wroteUpTo, seq);
    return result;
  }

  session = (signal?: AbortSignal) => this.get<SessionView>('/v1/session', undefined, signal);
  fleetSummary = (minSeq?: number, signal?: AbortSignal) => this.readModel<FleetSummary>('/v1/fleet/summary', { minSeq }, signal);
  sites = (signal?: AbortSignal) => this.get<{ items: SiteView[] }>('/v1/sites', undefined, signal);
  /** Hourly trends of one site (all when absent), `from`/`to` ISO. */
  trends = (query: { site?: string | undefined; from: string; to: string; minSeq?: number | undefined }, signal?: AbortSignal) =>
    this.readModel<TrendsView>('/v1/trends', query, signal);

  /** The node's log after `since` (absent: the newest `limit` lines). */
  nodeLogs = (nodeId: string, since: number | undefined, signal?: AbortSignal) =>
    this.get<NodeLogPage>(`/v1/nodes/${encodeURIComponent(nodeId)}/logs`, { since }, signal);
  nodes = (filter: NodeFilter & { cursor?: string | null; limit?: number; minSeq?: number }, signal?: AbortSignal) =>
    this.readModel<NodePage>('/v1/nodes', filter, signal);
  /** The node list's rows: the same filter and paging, without inventories and labels. */
  nodeRows = (filter: NodeFilter & { cursor?: string | null; limit?: number; minSeq?: number }, signal?: AbortSignal) =>
    this.readModel<NodeRowPage>('/v1/nodes', { ...filter, view: 'row' }, signal);
  node = (nodeId: string, minSeq?: number, signal?: AbortSignal) => this.readModel<NodeView>(`/v1/nodes/${encodeURIComponent(nodeId)}`, { minSeq }, signal);
  nodeWorkflows = (nodeId: string, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<{ items: WorkflowView[] }>(`/v1/nodes/${encodeURIComponent(nodeId)}/workflows`, { minSeq, limit: 20 }, signal);
  /** `at`: a stream sequence or an ISO time; absent: now. */
  nodeHistory = (nodeId: string, at?: number | string, signal?: AbortSignal) =>
    this.get<NodeHistory>(`/v1/nodes/${encodeURIComponent(nodeId)}/history`, { at }, signal);

  poolOffers = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: PoolOffer[] }>('/v1/pool/offers', { minSeq }, signal);
  /** Takes a free node of an offer and deploys it; the answer names the node the API picked. */
  allocate = (body: AllocateNode) => this.post<CommandResult & { nodeId: string }>('/v1/pool/allocate', body);

  workflows = (filter: { state?: WorkflowView['state'] | ''; cursor?: string | null; minSeq?: number }, signal?: AbortSignal) =>
    this.readModel<WorkflowPage>('/v1/workflows', filter, signal);
  workflow = (workflowId: string, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<WorkflowView>(`/v1/workflows/${encodeURIComponent(workflowId)}`, { minSeq }, signal);

  approvals = (state: ApprovalView['state'] | undefined, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<{ items: ApprovalView[] }>('/v1/approvals', { state, minSeq }, signal);
  approve = (workflowId: string, body: Omit<ApproveBatch, 'workflowId'>) =>
    this.post<{ seq: number }>(`/v1/approvals/${encodeURIComponent(workflowId)}/approve`, body);
  reject = (workflowId: string, body: Omit<RejectBatch, 'workflowId'>) =>
    this.post<{ seq: number }>(`/v1/approvals/${encodeURIComponent(workflowId)}/reject`, body);

  decisions = (status: DecisionView['status'] | undefined, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<{ items: DecisionView[] }>('/v1/autonomy/decisions', { status, minSeq }, signal);
  budgets = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: BudgetView[] }>('/v1/autonomy/budgets', { minSeq }, signal);
  autonomyControls = (minSeq?: number, signal?: AbortSignal) => this.readModel<ControlsView>('/v1/autonomy/controls', { minSeq }, signal);
  autonomyPolicies = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: PolicyView[] }>('/v1/autonomy/policies', { minSeq }, signal);
  approveDecision = (decisionId: string, body: Omit<ApproveDecision, 'decisionId'>) =>
    this.post<DecisionVerdict>(`/v1/autonomy/decisions/${encodeURIComponent(decisionId)}/approve`, body);
  rejectDecision = (decisionId: string, body: Omit<RejectDecision, 'decisionId'>) =>
    this.post<DecisionVerdict>(`/v1/autonomy/decisions/${encodeURIComponent(decisionId)}/reject`, body);

  tenants = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: TenantView[] }>('/v1/tenants', { minSeq }, signal);
  instances = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: InstanceView[] }>('/v1/vps/instances', { minSeq }, signal);

  plugins = (signal?: AbortSignal) => this.get<{ items: PluginView[] }>('/v1/plugins', undefined, signal);
  profiles = (signal?: AbortSignal) => this.get<{ items: ProfileView[] }>('/v1/profiles', undefined, signal);
  validateProfile = (profileId: string) => this.post<ProfileValidation>('/v1/profiles/validate', { profileId });

  modules = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: ModuleView[] }>('/v1/modules', { minSeq }, signal);
  module = (name: string, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<ModuleView & { versions: ModuleVersionView[] }>(`/v1/modules/${encodeURIComponent(name)}`, { minSeq }, signal);
  publishers = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: PublisherView[] }>('/v1/module-publishers', { minSeq }, signal);
  templates = (minSeq?: number, signal?: AbortSignal) => this.readModel<{ items: TemplateView[] }>('/v1/fleet/templates', { minSeq }, signal);
  assignments = (filter: { module?: string; cursor?: string | null }, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<{ items: AssignmentView[]; nextCursor: string | null }>('/v1/fleet/assignments', { ...filter, minSeq }, signal);
  rollouts = (filter: { module?: string; status?: RolloutStatus | '' }, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<{ items: RolloutView[] }>('/v1/rollouts', { ...filter, minSeq }, signal);
  rollout = (rolloutId: string, minSeq?: number, signal?: AbortSignal) =>
    this.readModel<RolloutDetailView>(`/v1/rollouts/${encodeURIComponent(rolloutId)}`, { minSeq }, signal);
  /** An operator's verb on a rollout (`POST /v1/rollouts/:rolloutId/:verb`); the key makes a repeated confirm one command. */
  /** An approver's signed verdict on a rollout awaiting approval (`fleet.approveRollout` / `fleet.rejectRollout`). */
  rolloutVerdict = (rolloutId: string, verdict: 'approve' | 'reject', body: { planDigest: string; approverId: string; signature: string }) =>
    this.post<CommandResult>(`/v1/rollouts/${encodeURIComponent(rolloutId)}/${verdict}`, body);

  rolloutVerb = (rolloutId: string, verb: RolloutVerb, idempotencyKey: string) =>
    this.post<CommandResult>(`/v1/rollouts/${encodeURIComponent(rolloutId)}/${verb}`, {}, idempotencyKey);

  /** A command (`POST /v1/commands/<name>`); the idempotency key makes a repeated submit of one dialog one command. */
  command = (name: string, payload: unknown, idempotencyKey: string) => this.post<CommandResult>(`/v1/commands/${name}`, payload, idempotencyKey);
}
