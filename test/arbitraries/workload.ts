import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { commandNonce } from '../../schemas/agent/agentCommand.ts';
import { keyIdOf, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { ramdiskAgentId } from '../../schemas/trust/agentIds.ts';
import type { NodeState } from '../../schemas/metal/nodeState.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { workflowAggregate, type ExistingWorkflow } from '../../services/workflow/workflow/workflow.ts';
import { fakeInventoryOf, fakeWipeReport } from '../metal/fakeAgent.ts';
import {
  DeciderModel,
  enrollArb,
  NODE_IDS,
  setLabelsArb,
  setMaintenanceArb,
  siteCreateArb,
  withoutUndefined,
  type Fresh,
  type GeneratedCommand,
} from './backbone.ts';

/**
 * Logs that exercise every read model: the site and node commands of `backbone.ts`, operator verbs on nodes, the
 * workflow engine's own commands driving those operations step by step (as the orchestrator and executor would,
 * with signed wipe results that do or do not cover the node), secrets, and the VPS commands.
 */

const TENANTS = ['t0', 't1'] as const;
const POOLS = ['p-metal', 'p-cloud'] as const;
const FLAVORS = ['small', 'large'] as const;
const INSTANCES = ['i0', 'i1', 'i2'] as const;
const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB property-test';
/** The metal pool's bcx runtime: a node carrying `bc.dev/driver.proc` takes its instances. */
const RUNTIME = 'proc';

const nodeVerbs = ['metal.deploy', 'metal.undeploy', 'metal.rescue', 'metal.unrescue', 'metal.retire', 'metal.retry'] as const;

/** How an engine step ends when the workload advances it: a wipe may also be signed but short of the inventory. */
const Outcomes = ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fail', 'short'] as const;

/** What to do next; `advance` becomes the engine commands due for the node's current workflow, `times` rounds of them, when it is planned. */
export type Intent =
  | { kind: 'command'; command: Fresh }
  | { kind: 'retry'; pick: number }
  | { kind: 'verb'; verb: (typeof nodeVerbs)[number] | 'natural'; node: number; tenant: number | null; pick: number }
  | { kind: 'advance'; node: number; outcome: (typeof Outcomes)[number]; retryable: boolean; times: number };

const sealed = { alg: 'A256GCM', keyId: '0123456789abcdef', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'c2VhbGVk', tag: 'AAAAAAAAAAAAAAAAAAAAAA==' };

/**
 * What the VPS reconciler sends a metal pool's site book (the fleet's metal instance, t0's i0, most often): a placement with the site's nodes as it read them (some
 * carrying the pool's runtime driver, some full already by the sender's count, which the book ignores), and the
 * unplacement once the host removed the instance.
 */
const instanceRefArb = fc.oneof(
  { arbitrary: fc.constant({ tenantId: 't0', instanceId: 'i0' }), weight: 3 },
  { arbitrary: fc.record({ tenantId: fc.constantFrom(...TENANTS), instanceId: fc.constantFrom(...INSTANCES) }), weight: 1 },
);
const placementCommandArb: fc.Arbitrary<Fresh> = fc.oneof(
  fc
    .record({
      instance: instanceRefArb,
      nodes: fc.subarray([...NODE_IDS], { minLength: 1 }),
      withDriver: fc.subarray([...NODE_IDS]),
      vcpus: fc.constantFrom(1, 4, 8),
    })
    .map(({ instance: { tenantId, instanceId }, nodes, withDriver, vcpus }) => ({
      name: 'vps.placeInstance',
      payload: {
        siteId: 's0',
        tenantId,
        instanceId,
        candidates: nodes.map((nodeId) => ({
          nodeId,
          labels: withDriver.includes(nodeId) ? { [`bc.dev/driver.${RUNTIME}`]: '0.1.0' } : {},
          capacity: { vcpus, memoryMib: 16_384, diskGib: 200 },
          allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
          schedulable: true,
          agentless: false,
        })),
      },
    })),
  instanceRefArb.map((p) => ({ name: 'vps.unplaceInstance', payload: { siteId: 's0', ...p } })),
);

const vpsCommandArb: fc.Arbitrary<Fresh> = fc.oneof(
  fc.record({ tenantId: fc.constantFrom(...TENANTS), name: fc.constantFrom('Acme', 'Globex') }).map((payload) => ({ name: 'vps.createTenant', payload })),
  fc
    .record({
      tenantId: fc.constantFrom(...TENANTS),
      instances: fc.nat(4),
      vcpus: fc.nat(16),
      memoryMib: fc.constantFrom(0, 4_096, 65_536),
      diskGib: fc.constantFrom(0, 100, 1_000),
    })
    .map((payload) => ({ name: 'vps.setQuota', payload })),
  fc.constant({ name: 'secrets.put', payload: { secretId: 'cloud-token', kind: 'generic', version: 1, sealed } }),
  fc.constant({ name: 'vps.createProviderAccount', payload: { accountId: 'acct', providerId: 'acme-cloud', region: 'eu-1', tokenSecretId: 'cloud-token' } }),
  fc
    .record({ siteId: fc.constantFrom('s0', 's1'), wipeMethod: fc.option(fc.constantFrom('zero', 'discard'), { nil: undefined }) })
    .map(({ siteId, wipeMethod }) => ({
      name: 'vps.createPool',
      payload: { poolId: 'p-metal', class: 'metal', agent: 'bcd', siteId, policy: withoutUndefined({ wipeMethod }), runtime: RUNTIME },
    })),
  fc.constant({ name: 'vps.createPool', payload: { poolId: 'p-cloud', class: 'provider', agent: 'none', accountId: 'acct' } }),
  fc
    .record({
      flavorId: fc.constantFrom(...FLAVORS),
      vcpus: fc.constantFrom(1, 4),
      memoryMib: fc.constantFrom(1_024, 8_192),
      diskGib: fc.constantFrom(10, 100),
    })
    .map((payload) => ({ name: 'vps.createFlavor', payload })),
  fc
    .record({ flavorId: fc.constantFrom(...FLAVORS), poolId: fc.constantFrom(...POOLS), offerId: fc.constantFrom('s-1', 'm-2') })
    .map((payload) => ({ name: 'vps.mapFlavor', payload })),
  fc.record({ poolId: fc.constantFrom(...POOLS), tenantId: fc.constantFrom(...TENANTS) }).map((payload) => ({ name: 'vps.offerPool', payload })),
  fc.record({ poolId: fc.constantFrom(...POOLS), tenantId: fc.constantFrom(...TENANTS) }).map((payload) => ({ name: 'vps.withdrawPool', payload })),
  fc
    .record({
      tenantId: fc.constantFrom(...TENANTS),
      instanceId: fc.constantFrom(...INSTANCES),
      poolId: fc.constantFrom(...POOLS),
      flavorId: fc.constantFrom(...FLAVORS),
      image: fc.constantFrom('ubuntu-24.04', 'debian-12'),
    })
    .map((p) => ({ name: 'vps.createInstance', payload: { ...p, sshKeys: [SSH_KEY] } })),
  fc
    .record({
      name: fc.constantFrom('vps.startInstance', 'vps.stopInstance', 'vps.deleteInstance', 'vps.releaseQuota'),
      tenantId: fc.constantFrom(...TENANTS),
      instanceId: fc.constantFrom(...INSTANCES),
    })
    .map(({ name, ...payload }) => ({ name, payload })),
  fc
    .record({
      tenantId: fc.constantFrom(...TENANTS),
      instanceId: fc.constantFrom(...INSTANCES),
      observed: fc.constantFrom('provisioning', 'running', 'stopped', 'deleted', 'error'),
    })
    .map((p) => ({ name: 'vps.recordInstanceObserved', payload: { ...p, providerInstanceId: `prov-${p.instanceId}`, addresses: ['203.0.113.7'] } })),
);

/**
 * Templates and assignments (the `modules` read model's `templates`, `host_assignments`): no module is published in
 * a workload, so a template naming one is refused (CLOSURE_CONFLICT) and the empty ones give hosts an empty plan.
 */
const fleetCommandArb: fc.Arbitrary<Fresh> = fc.oneof(
  fc
    .record({
      templateId: fc.constantFrom('base', 'web'),
      requires: fc.constantFrom([], [{ module: 'nginx', range: '^1' }]),
      includes: fc.constantFrom([], ['base']),
    })
    .filter((t) => !(t.templateId === 'base' && t.includes.length > 0))
    .map((payload) => ({ name: 'fleet.defineTemplate', payload })),
  fc.record({ nodeId: fc.constantFrom(...NODE_IDS), template: fc.constantFrom('base', 'web') }).map((payload) => ({ name: 'fleet.assignTemplate', payload })),
);

// Half the node work lands on the first node, so its operations get far.
const nodeArb = fc.oneof(fc.constant(0), fc.nat(NODE_IDS.length - 1));

const intentArb: fc.Arbitrary<Intent> = fc.oneof(
  { arbitrary: fc.oneof(siteCreateArb, enrollArb, setMaintenanceArb).map((command) => ({ kind: 'command' as const, command })), weight: 3 },
  { arbitrary: vpsCommandArb.map((command) => ({ kind: 'command' as const, command })), weight: 4 },
  { arbitrary: placementCommandArb.map((command) => ({ kind: 'command' as const, command })), weight: 2 },
  { arbitrary: fleetCommandArb.map((command) => ({ kind: 'command' as const, command })), weight: 1 },
  { arbitrary: setLabelsArb.map((command) => ({ kind: 'command' as const, command })), weight: 1 },
  {
    arbitrary: fc
      .record({
        verb: fc.constantFrom('natural' as const, 'natural' as const, ...nodeVerbs),
        node: nodeArb,
        tenant: fc.option(fc.nat(), { nil: null, freq: 4 }),
        pick: fc.nat(),
      })
      .map((v) => ({ kind: 'verb' as const, ...v })),
    weight: 4,
  },
  {
    arbitrary: fc
      .record({ node: nodeArb, outcome: fc.constantFrom(...Outcomes), retryable: fc.boolean(), times: fc.integer({ min: 1, max: 12 }) })
      .map((a) => ({ kind: 'advance' as const, ...a })),
    weight: 10,
  },
  { arbitrary: fc.nat().map((pick) => ({ kind: 'retry' as const, pick })), weight: 1 },
);

/** Every node carries the runtime's driver; n0 is the smallest. */
const relocationCandidates = NODE_IDS.map((nodeId, i) => ({
  nodeId,
  labels: { [`bc.dev/driver.${RUNTIME}`]: '0.1.0' },
  capacity: { vcpus: i === 0 ? 2 : 8, memoryMib: 16_384, diskGib: 200 },
  allocated: { vcpus: 0, memoryMib: 0, diskGib: 0 },
  schedulable: true,
  agentless: false,
}));

/**
 * A fleet to work on: two sites, a metal pool at the first (with a wipe method or not, and a runtime), the nodes enrolled
 * at either (in the pool or not), two of them inspected and one deployed for a tenant, two tenants with room in their
 * quota, a cloud account, flavors sold in both pools, an instance in the metal pool, placed and relocated. Commands after it still collide
 * with it (duplicates, ALREADY_EXISTS), which is part of the point.
 */
const fleetArb: fc.Arbitrary<Intent[]> = fc
  .record({
    wipeMethod: fc.option(fc.constantFrom('zero', 'discard'), { nil: undefined }),
    nodes: fc.tuple(...NODE_IDS.map(() => fc.record({ site: fc.constantFrom('s0', 's1'), pooled: fc.boolean() }))),
  })
  .map(({ wipeMethod, nodes }) => {
    const commands: Fresh[] = [
      { name: 'site.create', payload: { siteId: 's0', name: 'DC one' } },
      { name: 'site.create', payload: { siteId: 's1', name: 'Edge 2' } },
      {
        name: 'vps.createPool',
        payload: { poolId: 'p-metal', class: 'metal', agent: 'bcd', siteId: 's0', policy: withoutUndefined({ wipeMethod }), runtime: RUNTIME },
      },
      ...NODE_IDS.map((nodeId, i) => {
        const { site, pooled } = nodes[i]!;
        const bmc = { address: `https://10.0.0.${21 + i}`, credentialsRef: 'secret:bmc-a' };
        return {
          name: 'metal.enroll',
          payload: {
            nodeId,
            siteId: site,
            bmc,
            hardwareProfile: 'default',
            macs: [`52:54:00:aa:bb:0${i}`],
            ...(pooled && site === 's0' ? { poolId: 'p-metal' } : {}),
          },
        };
      }),
      ...TENANTS.flatMap((tenantId) => [
        { name: 'vps.createTenant', payload: { tenantId, name: `Tenant ${tenantId}` } },
        { name: 'vps.setQuota', payload: { tenantId, instances: 3, vcpus: 16, memoryMib: 65_536, diskGib: 1_000 } },
      ]),
      { name: 'secrets.put', payload: { secretId: 'cloud-token', kind: 'generic', version: 1, sealed } },
      { name: 'vps.createProviderAccount', payload: { accountId: 'acct', providerId: 'acme-cloud', region: 'eu-1', tokenSecretId: 'cloud-token' } },
      { name: 'vps.createPool', payload: { poolId: 'p-cloud', class: 'provider', agent: 'none', accountId: 'acct' } },
      { name: 'vps.createFlavor', payload: { flavorId: 'small', vcpus: 1, memoryMib: 1_024, diskGib: 10 } },
      ...POOLS.flatMap((poolId) => [
        { name: 'vps.mapFlavor', payload: { flavorId: 'small', poolId, offerId: 's-1' } },
        ...TENANTS.map((tenantId) => ({ name: 'vps.offerPool', payload: { poolId, tenantId } })),
      ]),
      // An instance in the metal pool, so placements in the body find a reservation to place.
      {
        name: 'vps.createInstance',
        payload: { tenantId: 't0', instanceId: 'i0', poolId: 'p-metal', flavorId: 'small', image: 'debian-12', sshKeys: [SSH_KEY] },
      },
      // Placed on n0 (the tightest fit), then moved off it as a lost node's instance is: the body starts from a relocation.
      { name: 'vps.placeInstance', payload: { siteId: 's0', tenantId: 't0', instanceId: 'i0', candidates: relocationCandidates } },
      { name: 'vps.requestRelocation', payload: { siteId: 's0', tenantId: 't0', instanceId: 'i0', fromNodeId: 'n0', reason: 'node lost' } },
      { name: 'vps.relocateInstance', payload: { siteId: 's0', tenantId: 't0', instanceId: 'i0', candidates: relocationCandidates } },
    ];
    // The first two nodes are inspected (six engine commands each) and the first deployed, so the body finds nodes
    // ready and deployed to work on.
    const inspections = [0, 1].map((node): Intent => ({ kind: 'advance', node, outcome: 'ok', retryable: true, times: 6 }));
    const deploy: Intent[] = [
      { kind: 'verb', verb: 'metal.deploy', node: 0, tenant: 0, pick: 0 },
      { kind: 'advance', node: 0, outcome: 'ok', retryable: true, times: 14 },
    ];
    return [...commands.map((command): Intent => ({ kind: 'command', command })), ...inspections, ...deploy];
  });

/** Random workloads: the fleet, then anything, the engine's steps most often. */
export function workloadArb(options: { minLength?: number; maxLength?: number } = {}): fc.Arbitrary<Intent[]> {
  const body = fc.array(intentArb, { minLength: options.minLength ?? 0, maxLength: options.maxLength ?? 60, size: 'large' });
  return fc.tuple(fleetArb, body).map(([fleet, tail]) => [...fleet, ...tail]);
}

/** The ramdisk each workflow boots: one key per workflow and join attempt, made once, so the wipe is signed by the agent `wait.agentJoined` saw. */
const ramdisks = new Map<string, { agentId: string; keyId: string; raw: Buffer; privateKey: KeyObject }>();
function ramdiskOf(wf: ExistingWorkflow, joinAttempt: number) {
  const key = `${wf.workflowId}/${joinAttempt}`;
  let ramdisk = ramdisks.get(key);
  if (!ramdisk) {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
    ramdisk = { agentId: ramdiskAgentId(wf.nodeId, keyIdOf(raw)), keyId: keyIdOf(raw), raw, privateKey };
    ramdisks.set(key, ramdisk);
  }
  return ramdisk;
}

/** The attempt nonce the executor would record in `workflow.startStep`: fixed per attempt, so replays agree. */
const attemptNonce = (workflowId: string, stepIndex: number, attempt: number) =>
  createHash('sha256').update(`${workflowId}/${stepIndex}/${attempt}`).digest('base64url').slice(0, 22);

/** The booted ramdisk joins: it registers its fresh key, and the step's output names it (as the join watch would). */
function ramdiskJoined(wf: ExistingWorkflow, attempt: number): { register: Fresh; output: { agentId: string; keyId: string } } {
  const ramdisk = ramdiskOf(wf, attempt);
  return {
    register: {
      name: 'agent.register',
      payload: { agentId: ramdisk.agentId, role: 'ramdisk', siteId: wf.siteId, nodeId: wf.nodeId, publicKey: ramdisk.raw.toString('base64') },
    },
    output: { agentId: ramdisk.agentId, keyId: ramdisk.keyId },
  };
}

/** The wipe result of exactly this step attempt, signed by the ramdisk the workflow booted. */
function signedWipe(wf: ExistingWorkflow, stepIndex: number, attempt: number, payload: unknown): string {
  const joinIndex = wf.steps.findLastIndex((step, i) => i < stepIndex && step.id === 'wait.agentJoined');
  const ramdisk = ramdiskOf(wf, wf.progress[joinIndex]?.attempt ?? 1);
  const commandId = `${wf.workflowId}-s${stepIndex}-a${attempt}`;
  const nonce = commandNonce(attemptNonce(wf.workflowId, stepIndex, attempt), commandId);
  const result = {
    commandId,
    kind: 'disk.wipe',
    nodeId: wf.nodeId,
    siteId: wf.siteId,
    agentId: ramdisk.agentId,
    ok: true,
    errorCode: '',
    errorMessage: '',
    payload,
    executedAtMs: 1,
    commandNonce: nonce,
  };
  return Buffer.from(signAgentResult(result, { privateKey: ramdisk.privateKey, publicKeyRaw: ramdisk.raw })).toString('base64');
}

/** A wipe report one disk short of the inventory's byte count. */
const shortWipe = { ...fakeWipeReport, disks: fakeWipeReport.disks.map((d) => ({ ...d, verifiedBytes: d.sizeBytes - 512 })) };

/** The engine commands due for the node's current workflow, as the orchestrator and executor would send them. */
function engineCommands(model: DeciderModel, nodeId: string, intent: Extract<Intent, { kind: 'advance' }>): Fresh[] {
  const node = model.stateOf(nodeAggregate, nodeId);
  if (!node.exists) return [];
  if (node.state === 'enrolled') return [{ name: 'metal.startInspection', payload: { nodeId } }];
  const current = node.current;
  if (!current) return [];
  const { workflowId, operation, inputs } = current;
  const wf = model.stateOf(workflowAggregate, workflowId);
  if (!wf.exists) return [{ name: 'workflow.start', payload: { workflowId, nodeId, siteId: node.siteId, operation, inputs } }];
  if (wf.status === 'completed') {
    const inventory: Fresh[] =
      operation === 'inspect' ? [{ name: 'metal.recordInventory', payload: { nodeId, workflowId, inventory: fakeInventoryOf(nodeId) } }] : [];
    return [...inventory, { name: 'metal.completeOperation', payload: { nodeId, workflowId } }];
  }
  if (wf.status === 'failed') return [{ name: 'metal.failOperation', payload: { nodeId, workflowId, reason: 'a step failed', failedStep: null } }];
  const stepIndex = wf.progress.findIndex((p) => p.status !== 'succeeded');
  const progress = wf.progress[stepIndex];
  const step = wf.steps[stepIndex];
  if (!progress || !step) return [];
  const ids = { workflowId, stepIndex };
  if (progress.status === 'scheduled' || progress.status === 'failed') {
    const wiping: Fresh[] = step.attests === 'wipe' && progress.status === 'scheduled' ? [{ name: 'metal.markWiping', payload: { nodeId, workflowId } }] : [];
    const attempt = progress.status === 'scheduled' ? 1 : progress.attempt + 1;
    return [...wiping, { name: 'workflow.startStep', payload: { ...ids, attempt, nonce: attemptNonce(workflowId, stepIndex, attempt) } }];
  }
  if (progress.status !== 'running') return [];
  const attempt = progress.attempt;
  if (intent.outcome === 'fail')
    return [{ name: 'workflow.failStep', payload: { ...ids, attempt, code: 'DRIVER_ERROR', message: 'the BMC said no', retryable: intent.retryable } }];
  if (step.id === 'wait.agentJoined') {
    const joined = ramdiskJoined(wf, attempt);
    return [joined.register, { name: 'workflow.completeStep', payload: { ...ids, attempt, output: joined.output } }];
  }
  if (step.attests !== 'wipe')
    return [{ name: 'workflow.completeStep', payload: { ...ids, attempt, output: step.records === 'inventory' ? fakeInventoryOf(nodeId) : { ok: true } } }];
  const signedResult = signedWipe(wf, stepIndex, attempt, intent.outcome === 'short' ? shortWipe : fakeWipeReport);
  return [{ name: 'workflow.completeStep', payload: { ...ids, attempt, output: {}, signedResult } }];
}

/** The verbs an operator would send a node in each resting state (anything else is tried too, and refused). */
const naturalVerbs: Partial<Record<NodeState, readonly (typeof nodeVerbs)[number][]>> = {
  ready: ['metal.deploy', 'metal.deploy', 'metal.rescue', 'metal.retire'],
  deployed: ['metal.undeploy', 'metal.undeploy', 'metal.rescue'],
  rescue: ['metal.unrescue'],
  failed: ['metal.retry', 'metal.retry', 'metal.retire'],
};

/** Node verbs, some sent for a tenant (its token). */
function verbCommand(model: DeciderModel, intent: Extract<Intent, { kind: 'verb' }>, nodeId: string): Fresh {
  const tenant = intent.tenant === null ? {} : { tenantId: TENANTS[intent.tenant % TENANTS.length]! };
  const node = model.stateOf(nodeAggregate, nodeId);
  const natural = node.exists ? naturalVerbs[node.state] : undefined;
  const verb = intent.verb !== 'natural' ? intent.verb : natural ? natural[intent.pick % natural.length]! : nodeVerbs[intent.pick % nodeVerbs.length]!;
  if (verb === 'metal.deploy') {
    return {
      name: verb,
      payload: { nodeId, imageUrl: 'https://images.example/os.raw', imageSha256: 'a'.repeat(64), role: 'worker', sshKeys: [SSH_KEY], ...tenant },
    };
  }
  const scoped = verb === 'metal.retire' || verb === 'metal.retry' ? {} : tenant;
  return { name: verb, payload: { nodeId, ...scoped } };
}

/**
 * Turns intents into commands against the decider model, so engine steps name the workflow, step and attempt that
 * are due. Returns the commands and the model's simulation of them (the same as `simulate(commands)`).
 */
export async function planWorkload(intents: readonly Intent[], idPrefix = 'cmd') {
  const model = new DeciderModel();
  const commands: GeneratedCommand[] = [];
  const fresh: number[] = [];
  const send = async (command: Fresh) => {
    fresh.push(commands.length);
    const generated = { ...command, commandId: `${idPrefix}-${String(commands.length).padStart(4, '0')}` };
    commands.push(generated);
    await model.run(generated);
  };
  for (const intent of intents) {
    if (intent.kind === 'retry') {
      if (fresh.length === 0) continue;
      const of = fresh[intent.pick % fresh.length]!;
      const retry = { ...commands[of]!, retryOf: of };
      commands.push(retry);
      await model.run(retry);
    } else if (intent.kind === 'command') await send(intent.command);
    else {
      const nodeId = NODE_IDS[intent.node % NODE_IDS.length]!;
      if (intent.kind === 'verb') await send(verbCommand(model, intent, nodeId));
      else for (let i = 0; i < intent.times; i++) for (const command of engineCommands(model, nodeId, intent)) await send(command);
    }
  }
  return { commands, sim: model.finish() };
}
