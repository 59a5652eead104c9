import type { DeployDriver } from '../../schemas/metal/hardwareProfile.ts';
import type { z } from 'zod';
import type { AgentCommandKind } from '../../schemas/agent/agentCommand.ts';
import type { BmcConnection } from '../../schemas/agent/bmc.ts';
import type { HttpProxyAnswer, HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import { declarationIssue, declarationsOf, StepDeclarations, type StepAttests, type StepRecords } from '../../schemas/metal/stepDeclarations.ts';
import type { NodeOperation, StepRunsOn } from '../../schemas/metal/workflow.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import type { Logger } from 'pino';
import type { StepBlobs, StepPki, StepSecrets } from './stepFacilities.ts';

/** What a step passes to `httpViaSite`: defaults (method, headers, timeout) may be left out. */
export type HttpProxyRequestInput = z.input<typeof HttpProxyRequest>;

/** The node a step works on. */
export interface StepNode {
  readonly nodeId: string;
  readonly siteId: string;
  /** The BMC endpoint with the node's enrolled options (auth, TLS, boot mode); credentials only as a reference. */
  readonly bmc: BmcConnection;
  /** The MACs the node was enrolled with: an inspection must find each in the system it reads. */
  readonly macs: readonly string[];
  /** Addresses recorded for the machine's own API: the only hosts `httpViaSite` may reach. */
  readonly addresses: readonly string[];
  /** The SMBIOS UUID inspection read, for join tokens bound to this very machine; null before inspection. */
  readonly productUuid: string | null;
  /** The metal pool the node was enrolled into, if any. */
  readonly poolId: string | null;
  /** The hardware profile the node enrolled as (`default` and older enrolments: Redfish, iPXE, image stream). */
  readonly hardwareProfile: string;
  /** How an image gets onto its disk: `image-stream` (the bcd ramdisk) or `agentless` (nothing ever runs on it). */
  readonly deployDriver: DeployDriver;
}

/**
 * The VPS instance a step works on, when its workflow remediates an instance (`vps.remediateInstance`). Such a step
 * has no node: reading `ctx.node`, the agent platform or join tokens fails the step (`UNSUPPORTED`, not retried).
 */
export interface StepInstance {
  readonly instanceId: string;
  readonly tenantId: string;
  /** The pool the instance was created in. */
  readonly poolId: string;
  /** The provider's id for it, once the reconciler has seen it. */
  readonly providerInstanceId: string | null;
  readonly addresses: readonly string[];
  /** What the reconciler last saw it be (`running`, `stopped`, …). */
  readonly observed: string | null;
}

/** Platform facilities a built-in step may use; the plugin SDK will expose the same through its own context. */
export interface StepPlatform {
  /** Sends one agent command (at most once per attempt) and resolves its verified result payload. */
  runAgentCommand(kind: string, params: Record<string, unknown>, destructive: boolean): Promise<{ payload: unknown; agentId: string }>;
  /**
   * One HTTP request to this node's own API through its site agent (`site.httpProxy`), refused before any command
   * exists when it leaves the SSRF bound (see `httpProxyPolicy.ts`). Resolves the answer; a redirect, an oversize
   * answer or a pin mismatch fails the step like any agent failure. With `poll: true` it does not wait: it resolves
   * the newest settled answer under `key` (null while none has, or when the last request failed) and sends the next
   * request once the previous one settled.
   */
  httpViaSite(request: HttpProxyRequestInput): Promise<HttpProxyAnswer | null>;
  /** Resolves the first ramdisk agent registered for this node since `sinceIso`. */
  waitForAgent(role: 'ramdisk' | 'node', sinceIso: string): Promise<{ agentId: string; keyId: string }>;
}

/** Addresses as seen from the machines, which may differ from the control plane's own. */
export interface AgentEndpoints {
  /** NATS for agents (`BC_AGENT_NATS_URL`, default the control plane's `BC_NATS_URL`). */
  readonly natsUrl: string;
  /** With broker auth: where an agent fetches the public join credential it connects with to join (`bcd … --join-creds`). */
  readonly joinCredsUrl?: string;
}

export interface StepContext<I> {
  readonly node: StepNode;
  /** Set when the workflow runs against a VPS instance instead of a node (see `StepInstance`). */
  readonly instance?: StepInstance;
  /**
   * `restartedAt`: when the workflow last restarted from its boot because the agent inside the machine was lost (null
   * if never); an agent registered before then belongs to the lost boot.
   */
  readonly workflow: {
    readonly workflowId: string;
    readonly operation: NodeOperation;
    readonly stepIndex: number;
    readonly attempt: number;
    readonly startedAt: string;
    readonly restartedAt?: string | null;
  };
  readonly input: I;
  /** Same for every delivery of one attempt, different for the next attempt: `<workflowId>-s<index>-a<attempt>`. */
  readonly idempotencyKey: string;
  /** Absolute time (ms) after which the attempt times out. */
  readonly deadlineMs: number;
  /** Tells JetStream the work is still in progress (`msg.working()`); call it at least every few seconds. */
  heartbeat: () => void;
  /** Aborted when the executor stops; the work is then redelivered to another executor. */
  readonly signal: AbortSignal;
  /** Carries the workflow, step, attempt and node ids on every line. */
  readonly log: Logger;
  readonly platform: StepPlatform;
  /** Single-use join tokens for this node's agents. */
  readonly pki: StepPki;
  /** Secret references (never plaintexts). */
  readonly secrets: StepSecrets;
  /** Artefacts for this node, by sha256, behind unguessable per-node URLs. */
  readonly blobs: StepBlobs;
  /** How the node's agents reach the platform: what a step writes into a seed so an installed host can join. */
  readonly agentEndpoints: AgentEndpoints;
  /** Mustache without HTML escaping; a missing value fails the step instead of rendering empty. */
  renderTemplate(template: string, values: Readonly<Record<string, unknown>>): string;
}

/**
 * A step implementation. `run` resolves the step's output, or throws `TerminalError` / `RetryableError` /
 * `stepNotReady(reason)`; anything else thrown counts as retryable. `input` validates the resolved params before the
 * attempt runs; `output`, when given, validates what `run` resolved (a mismatch fails the step, not retried).
 */
export interface StepDefinition<Id extends string = string, I = unknown, O = unknown> {
  readonly id: Id;
  readonly runsOn: StepRunsOn;
  /** Sends commands that destroy data or state (power, wipe, image, firmware, machine API calls). Default false. */
  readonly destructive: boolean;
  /**
   * The agent command kinds this step may send. Known up front so a quorum batch names them before the workflow runs;
   * sending anything else is refused at enqueue. Default: none.
   */
  readonly sends: readonly AgentCommandKind[];
  /** Agents a control-plane step goes through (`site`: it reaches the machine via `httpViaSite`). Default: none. */
  readonly relays: readonly 'site'[];
  /**
   * What the step's success attests, checked by the engine instead of trusted: `wipe`, its signed `disk.wipe` result
   * covers the node's disks (so it must send `disk.wipe` and be destructive). The engine decides by this, not by the id.
   */
  readonly attests?: StepAttests;
  /** What the node records from the step's output when an inspection completes (`inventory`, `inBandInventory`). */
  readonly records?: StepRecords;
  readonly input: z.ZodType<I>;
  readonly output: z.ZodType<O> | undefined;
  run(ctx: StepContext<I>): Promise<O>;
}

/** What `defineStep` takes: a step with its defaults left out. */
export type StepSpec<Id extends string, I, O> = Omit<StepDefinition<Id, I, O>, 'destructive' | 'sends' | 'relays' | 'output'> &
  Partial<Pick<StepDefinition<Id, I, O>, 'destructive' | 'sends' | 'relays'>> & { readonly output?: z.ZodType<O> };

/**
 * A step, with defaults filled in and frozen; its `id` keeps its literal type. Throws `VALIDATION_FAILED` when its
 * declarations are not ones the platform knows (a plugin in plain JavaScript has no type checker) or cannot hold.
 */
export function defineStep<const Id extends string, I, O = unknown>(step: StepSpec<Id, I, O>): StepDefinition<Id, I, O> {
  const defined = { destructive: false, sends: [], relays: [], ...step, output: step.output };
  const declared = StepDeclarations.safeParse({ attests: step.attests, records: step.records });
  if (!declared.success) {
    const issues = declared.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new PlatformError('VALIDATION_FAILED', `step ${step.id}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  const issue = declarationIssue(defined);
  if (issue) throw new PlatformError('VALIDATION_FAILED', `step ${step.id}: ${issue}`);
  return Object.freeze({ ...defined, ...declarationsOf(declared.data) });
}
