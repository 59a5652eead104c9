import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { commandNonce } from '../../schemas/agent/agentCommand.ts';
import { keyIdOf, signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import { ramdiskAgentId } from '../../schemas/trust/agentIds.ts';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import type { ResolvedStep } from '../../schemas/metal/workflow.ts';
import { builtinProfileCatalog, builtinProfiles } from '../../services/metal/profiles/builtin.ts';
import { ubuntuAutoinstall } from '../../plugins/acme-autoinstall/index.ts';
import { talos18 } from '../../plugins/talos/index.ts';
import { startWorkflow } from '../../services/workflow/workflow/start.ts';
import { completeStep } from '../../services/workflow/workflow/completeStep.ts';
import { failStep } from '../../services/workflow/workflow/failStep.ts';
import { rejectResult } from '../../services/workflow/workflow/rejectResult.ts';
import { countRejectedResults } from '../../services/workflow/workflow/countRejectedResults.ts';
import type { RefusalCount } from '../../schemas/refusals.ts';
import { startStep } from '../../services/workflow/workflow/startStep.ts';
import { wipeAttestationOf, workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { fakeInventory } from './fakeAgent.ts';
import { deciderSpec } from './spec.ts';

const given = deciderSpec(workflowAggregate);
const wf = 'wf-0123456789ab';
const start = { workflowId: wf, nodeId: 'n1', siteId: 'dc1', operation: 'release' as const, inputs: {} };
const noQuorum = { dependencies: { quorum: { approvers: [], threshold: 0, approvalTtlSeconds: 3_600 } } };
const started = given([])
  .when(startWorkflow, start, noQuorum)
  .then((e) => expect(e.map((x) => x.type)).toEqual(['WorkflowStarted', 'StepScheduled']));
const steps = resolveSteps(builtinProfiles.release, {});
const ids = (stepIndex: number, attempt = 1) => ({ workflowId: wf, stepIndex, attempt });
/** The nonce every attempt of these tests starts with. */
const nonce = 'bm9uY2Utb2YtdGhlLWF0dGVtcHQ';
const begin = (stepIndex: number, attempt = 1) => ({ ...ids(stepIndex, attempt), nonce });
const stepStarted = (i: number, attempt = 1): WorkflowEvent => ({
  type: 'StepStarted',
  data: { ...ids(i, attempt), stepId: steps[i]!.id, startedAt: '2026-12-02T12:00:00.000Z', nonce },
});
const stepSucceeded = (i: number, output: unknown = {}): WorkflowEvent => ({ type: 'StepSucceeded', data: { ...ids(i), stepId: steps[i]!.id, output } });
const scheduled = (i: number): WorkflowEvent => ({ type: 'StepScheduled', data: { ...ids(i), stepId: steps[i]!.id } });

describe('profiles', () => {
  it('resolve the built-in operations into their steps with defaults filled in', () => {
    expect(resolveSteps(builtinProfiles.inspect, {}).map((s) => [s.id, s.runsOn])).toEqual([['inventory.read', 'site']]);
    const deploy = resolveSteps(builtinProfiles.deploy, { imageUrl: 'https://i/x.raw', imageSha256: 'a'.repeat(64), sshKeys: ['k'] });
    expect(deploy.map((s) => s.id)).toEqual(['boot.setOnce', 'power.set', 'wait.agentJoined', 'image.write', 'userdata.write', 'boot.clear', 'power.set']);
    expect(deploy[0]!.params).toEqual({ target: 'Pxe' });
    expect(deploy[3]).toMatchObject({ runsOn: 'node', destructive: true, params: { imageUrl: 'https://i/x.raw', sha256: 'a'.repeat(64) } });
    expect(deploy[4]!.params).toEqual({ sshKeys: ['k'] });
    expect(deploy[6]!.params).toEqual({ action: 'cycle' });
    expect(deploy[2]).toMatchObject({ runsOn: 'control-plane', retry: { maxAttempts: 3, backoffMs: 2_000 } });
    expect(steps.map((s) => s.id)).toEqual(['boot.setOnce', 'power.set', 'wait.agentJoined', 'disk.wipe', 'boot.clear', 'power.set']);
    expect(steps[3]).toMatchObject({ destructive: true, params: { mode: 'zero' } });
    expect(steps.at(-1)!.params).toEqual({ action: 'off' });
    expect(resolveSteps(builtinProfiles.rescue, {}).map((s) => s.id)).toEqual(['boot.setOnce', 'power.set', 'wait.agentJoined', 'boot.clear']);
  });

  it('end every boot override they set, after the boot it was for and before any later power step', () => {
    const setting = [...builtinProfileCatalog, ubuntuAutoinstall, talos18].filter((p) => p.steps.some((s) => s.id === 'boot.setOnce'));
    expect(setting.map((p) => p.id).sort()).toEqual([
      'deploy',
      'deploy-configured',
      'inspect-inband',
      'release',
      'rescue',
      'retire',
      'talos-1.8',
      'ubuntu-24.04-autoinstall',
    ]);
    for (const profile of setting) {
      const ids = profile.steps.map((s) => s.id);
      const boot = ids.indexOf('power.set', ids.indexOf('boot.setOnce'));
      const clear = ids.indexOf('boot.clear');
      // A BMC that keeps a one-time override as Continuous boots it again at every restart until this step.
      expect(clear, profile.id).toBeGreaterThan(boot);
      expect(ids.slice(boot + 1, clear).includes('power.set'), profile.id).toBe(false);
    }
  });
});

describe('workflow deciders and evolve', () => {
  it('start freezes the resolved steps and schedules the first; starting again is a no-op', () => {
    expect(started[0]).toMatchObject({ data: { profile: { id: 'release', version: 3 }, steps, startedAt: '2026-12-02T12:00:00.000Z' } });
    expect(started[1]).toEqual(scheduled(0));
    given(started).when(startWorkflow, start, noQuorum).then([]);
    expect(given(started).state).toMatchObject({ status: 'running', progress: [{ status: 'scheduled', attempt: 0 }, { status: 'pending' }, {}, {}, {}, {}] });
  });

  it('startStep starts the due attempt, resumes the running one, and refuses others', () => {
    given(started)
      .when(startStep, begin(0))
      .then([stepStarted(0)]);
    // A resumed attempt keeps the nonce it started with: another one offered now changes nothing.
    given([...started, stepStarted(0)])
      .when(startStep, { ...begin(0), nonce: 'YW5vdGhlci1ub25jZS1lbnRpcmVseQ' })
      .then([]);
    const resumed = given([...started, stepStarted(0)]).state;
    expect(resumed.exists && resumed.progress[0]).toMatchObject({ status: 'running', nonce });
    given(started).when(startStep, begin(0, 2)).thenRejects('ILLEGAL_TRANSITION');
    given(started).when(startStep, begin(1)).thenRejects('ILLEGAL_TRANSITION');
    given([]).when(startStep, begin(0)).thenRejects('NOT_FOUND');
  });

  it('completeStep schedules the next step, and completes the workflow after the last', () => {
    given([...started, stepStarted(0)])
      .when(completeStep, { ...ids(0), output: { a: 1 } })
      .then([stepSucceeded(0, { a: 1 }), scheduled(1)]);
    given([...started, stepStarted(0), stepSucceeded(0)])
      .when(completeStep, { ...ids(0), output: {} })
      .then([]);
    given(started)
      .when(completeStep, { ...ids(0), output: {} })
      .thenRejects('ILLEGAL_TRANSITION');
    const allButLast = [...started, ...[0, 1, 2, 3, 4].flatMap((i) => [stepStarted(i), stepSucceeded(i, i === 3 ? { attested: true } : {}), scheduled(i + 1)])];
    const done = given([...allButLast, stepStarted(5)])
      .when(completeStep, { ...ids(5), output: {} })
      .then((e) => expect(e.map((x) => x.type)).toEqual(['StepSucceeded', 'WorkflowCompleted']));
    const state = given([...allButLast, stepStarted(5), ...done]).state;
    expect(state).toMatchObject({ status: 'completed' });
    expect(wipeAttestationOf(state)).toEqual({ attested: true });
    expect(wipeAttestationOf(given([...started, stepStarted(0), stepSucceeded(0, { attested: true })]).state)).toEqual({
      attested: false,
      reason: 'no wipe step succeeded',
    });
  });

  it('failStep keeps a retryable failure open until the attempts are used up, then fails the workflow', () => {
    const fail = (attempt: number, retryable = true) => ({ ...ids(0, attempt), code: 'AGENT_FAILED', message: 'x', retryable });
    given([...started, stepStarted(0)])
      .when(failStep, fail(1))
      .then((e) => expect(e).toMatchObject([{ type: 'StepFailed', data: { retryable: true } }]));
    const failedOnce: WorkflowEvent = { type: 'StepFailed', data: { ...ids(0), stepId: 'boot.setOnce', code: 'AGENT_FAILED', message: 'x', retryable: true } };
    given([...started, stepStarted(0), failedOnce])
      .when(startStep, begin(0, 2))
      .then([stepStarted(0, 2)]);
    given([...started, stepStarted(0), failedOnce])
      .when(failStep, fail(1))
      .then([]);
    const third = [...started, stepStarted(0), failedOnce, stepStarted(0, 3)];
    given(third)
      .when(failStep, fail(3))
      .then((e) =>
        expect(e).toMatchObject([
          { type: 'StepFailed', data: { retryable: false } },
          { type: 'WorkflowFailed', data: { failedStep: 'boot.setOnce', stepIndex: 0 } },
        ]),
      );
    given([...started, stepStarted(0)])
      .when(failStep, fail(1, false))
      .then((e) => expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowFailed']));
  });

  it('failStep records a rejected agent result before the failure', () => {
    const wipe = [...started, ...[0, 1, 2].flatMap((i) => [stepStarted(i), stepSucceeded(i), scheduled(i + 1)]), stepStarted(3)];
    given(wipe)
      .when(failStep, {
        ...ids(3),
        code: 'AGENT_RESULT_REJECTED',
        message: 'forged',
        retryable: false,
        rejected: { commandId: `${wf}-s3-a1`, reason: 'FORGED' },
      })
      .then((e) => expect(e.map((x) => x.type)).toEqual(['AgentResultRejected', 'StepFailed', 'WorkflowFailed']));
    const ended = given([...started, stepStarted(0)])
      .when(failStep, { ...ids(0), code: 'X', message: 'x', retryable: false })
      .then(() => undefined);
    given([...started, stepStarted(0), ...ended])
      .when(startStep, begin(1))
      .thenRejects('ILLEGAL_TRANSITION');
  });

  it('rejectResult records a refused result and leaves the attempt running', () => {
    const wipe = [...started, ...[0, 1, 2].flatMap((i) => [stepStarted(i), stepSucceeded(i), scheduled(i + 1)]), stepStarted(3)];
    const rejected = given(wipe)
      .when(rejectResult, { ...ids(3), commandId: `${wf}-s3-a1`, reason: 'NOT_AUTHORISED' })
      .then([{ type: 'AgentResultRejected', data: { workflowId: wf, stepIndex: 3, commandId: `${wf}-s3-a1`, reason: 'NOT_AUTHORISED' } }]);
    expect(given([...wipe, ...rejected]).state).toMatchObject({ status: 'running', progress: [{}, {}, {}, { status: 'running', attempt: 1 }, {}, {}] });
    given(wipe)
      .when(rejectResult, { ...ids(3, 2), commandId: `${wf}-s3-a2`, reason: 'MALFORMED' })
      .thenRejects('ILLEGAL_TRANSITION');
  });

  it('countRejectedResults records one count of refused results and leaves the attempt running', () => {
    const wipe = [...started, ...[0, 1, 2].flatMap((i) => [stepStarted(i), stepSucceeded(i), scheduled(i + 1)]), stepStarted(3)];
    const count: RefusalCount = {
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-01T00:00:02.000Z',
      refused: 298,
      sources: [
        { source: 'node-n1', refused: 150, reasons: { NOT_AUTHORISED: 150 } },
        { source: 'unreadable', refused: 148, reasons: { MALFORMED: 148 } },
      ],
      otherSources: 0,
    };
    const counted = given(wipe)
      .when(countRejectedResults, { ...ids(3), commandId: `${wf}-s3-a1`, ...count })
      .then([{ type: 'AgentResultsRejectedCounted', data: { workflowId: wf, stepIndex: 3, commandId: `${wf}-s3-a1`, ...count } }]);
    const state = given([...wipe, ...counted]).state as { status: string; progress: readonly unknown[] };
    expect(state.status).toBe('running');
    expect(state.progress[3]).toMatchObject({ status: 'running', attempt: 1 });
    given(wipe)
      .when(countRejectedResults, { ...ids(3, 2), commandId: `${wf}-s3-a2`, ...count })
      .thenRejects('ILLEGAL_TRANSITION');
  });
});

describe('wipe attestation', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const keyId = keyIdOf(raw);
  const signer = {
    exists: true as const,
    agentId: ramdiskAgentId('n1', keyId),
    role: 'ramdisk' as const,
    siteId: 'dc1',
    nodeId: 'n1',
    publicKey: raw.toString('base64'),
    keyId,
  };
  const report = {
    method: 'zero',
    disks: [{ path: '/dev/nvme0n1', serial: 'D1', model: 'FakeDisk', sizeBytes: 1_920_383_410_176, method: 'zero', verifiedBytes: 1_920_383_410_176 }],
  };
  const inventory = fakeInventory;
  // The release booted this ramdisk: `wait.agentJoined` (step 2) saw it join.
  const wipeRunning = [
    ...started,
    ...[0, 1, 2].flatMap((i) => [stepStarted(i), stepSucceeded(i, i === 2 ? { agentId: signer.agentId, keyId } : {}), scheduled(i + 1)]),
    stepStarted(3),
  ];
  const signed = (commandId: string, key = privateKey, fields: { agentId?: string; commandNonce?: string; payload?: unknown } = {}) =>
    Buffer.from(
      signAgentResult(
        {
          commandId,
          kind: 'disk.wipe',
          nodeId: 'n1',
          siteId: 'dc1',
          agentId: signer.agentId,
          ok: true,
          errorCode: '',
          errorMessage: '',
          payload: report,
          executedAtMs: 1,
          commandNonce: commandNonce(nonce, commandId),
          ...fields,
        },
        { privateKey: key, publicKeyRaw: raw },
      ),
    ).toString('base64');
  const outputOf = (payload: object, dependencies: object) =>
    given(wipeRunning)
      .when(completeStep, { ...ids(3), ...payload }, { dependencies })
      .then(() => undefined)[0]!.data as { output: { attested: boolean; unattestedReason?: string } };

  it('is set only by a verified signed result of this very attempt, never by the claimed output', () => {
    expect(outputOf({ output: { attested: true } }, { signer: undefined, inventory }).output.attested).toBe(false);
    expect(outputOf({ output: {}, signedResult: signed(`${wf}-s3-a1`) }, { signer, inventory }).output).toEqual({
      ...report,
      attested: true,
      agentId: signer.agentId,
    });
    expect(outputOf({ output: {}, signedResult: signed(`${wf}-s3-a9`) }, { signer, inventory }).output.attested).toBe(false);
    expect(
      outputOf({ output: {}, signedResult: signed(`${wf}-s3-a1`, generateKeyPairSync('ed25519').privateKey) }, { signer, inventory }).output.attested,
    ).toBe(false);
    expect(outputOf({ output: {}, signedResult: signed(`${wf}-s3-a1`) }, { signer: { ...signer, nodeId: 'n2' }, inventory }).output.attested).toBe(false);
  });

  it('needs the signed report to cover every drive of the inventory: a signature alone attests nothing', () => {
    const withDisks = (disks: unknown[]) => signed(`${wf}-s3-a1`, privateKey, { payload: { method: 'zero', disks } });
    const disk = report.disks[0]!;
    // The payload a wipe result carried before it named its disks: signed, and still no attestation.
    expect(
      outputOf(
        { output: {}, signedResult: signed(`${wf}-s3-a1`, privateKey, { payload: { disks: [{ id: 'nvme0', verified: true }] } }) },
        { signer, inventory },
      ).output,
    ).toMatchObject({
      attested: false,
      unattestedReason: expect.stringMatching(/does not say which disks/),
    });
    expect(outputOf({ output: {}, signedResult: withDisks([{ ...disk, verifiedBytes: disk.sizeBytes - 4096 }]) }, { signer, inventory }).output).toMatchObject({
      attested: false,
      unattestedReason: expect.stringMatching(/erased over 1920383406080 of its 1920383410176 bytes/),
    });
    const twoDrives = { ...inventory, disks: [...inventory.disks, { id: 'nvme1', sizeBytes: 1 << 30, model: null, serial: 'D2' }] };
    expect(outputOf({ output: {}, signedResult: withDisks([disk]) }, { signer, inventory: twoDrives }).output).toMatchObject({
      attested: false,
      unattestedReason: 'drive nvme1 (serial D2, 1073741824 bytes) is not in the wipe result',
    });
  });

  it("is decided by the step's declaration: a plugin's step that attests a wipe is one, a disk.wipe frozen without it is not", () => {
    const frozen = started[0]! as Extract<WorkflowEvent, { type: 'WorkflowStarted' }>;
    const withStep3 = (step: ResolvedStep): WorkflowEvent => ({ ...frozen, data: { ...frozen.data, steps: frozen.data.steps.with(3, step) } });
    const { attests: _, ...undeclared } = frozen.data.steps[3]!;
    const complete = (step: ResolvedStep, output: unknown) =>
      given([withStep3(step), ...wipeRunning.slice(1)])
        .when(completeStep, { ...ids(3), output, signedResult: signed(`${wf}-s3-a1`) }, { dependencies: { signer, inventory } })
        .then(() => undefined)[0]!.data as { stepId: string; output: unknown };
    expect(frozen.data.steps[3]).toMatchObject({ id: 'disk.wipe', attests: 'wipe' });
    const erase = complete({ ...undeclared, id: 'acme.secureErase', plugin: 'acme', attests: 'wipe' }, {});
    expect(erase).toEqual({ ...ids(3), stepId: 'acme.secureErase', output: { ...report, attested: true, agentId: signer.agentId } });
    // Not declared: its output is kept as the step gave it, and a claimed `attested` counts for nothing.
    expect(complete(undeclared, { attested: true }).output).toEqual({ attested: true });
    const claimed = [withStep3(undeclared), ...wipeRunning.slice(1), stepSucceeded(3, { attested: true })];
    expect(wipeAttestationOf(given(claimed).state)).toEqual({ attested: false, reason: 'no wipe step succeeded' });
  });

  it('is never set by a result made before the command (another nonce)', () => {
    expect(
      outputOf({ output: {}, signedResult: signed(`${wf}-s3-a1`, privateKey, { commandNonce: 'cHVibGlzaGVkLWJlZm9yZS10aGUtY29tbWFuZA' }) }, { signer }).output
        .attested,
    ).toBe(false);
  });

  it("is never set by the installed host's node agent, nor by a ramdisk other than the one this workflow booted", () => {
    const nodeAgent = { ...signer, agentId: 'node-n1', role: 'node' as const };
    expect(outputOf({ output: {}, signedResult: signed(`${wf}-s3-a1`, privateKey, { agentId: 'node-n1' }) }, { signer: nodeAgent }).output.attested).toBe(
      false,
    );
    const otherBoot = { ...signer, agentId: ramdiskAgentId('n1', 'zzzzzzzzzz') };
    expect(
      outputOf({ output: {}, signedResult: signed(`${wf}-s3-a1`, privateKey, { agentId: otherBoot.agentId }) }, { signer: otherBoot }).output.attested,
    ).toBe(false);
  });
});
