import { describe, expect, it } from 'vitest';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import { supersededBootIdsOf } from '../../schemas/trust/ramdiskBoot.ts';
import { builtinProfiles, configuredDeployProfile } from '../../services/metal/profiles/builtin.ts';
import { bootOfReset } from '../../services/workflow/workflow/rewind.ts';
import { failStep } from '../../services/workflow/workflow/failStep.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { deciderSpec } from '../metal/spec.ts';

const now = '2026-12-02T12:00:00.000Z';
const wf = 'wf-0123456789ab';
const given = deciderSpec(workflowAggregate);
const steps = resolveSteps(builtinProfiles.deploy, { imageUrl: 'https://i/x.raw', imageSha256: 'a'.repeat(64) });
const ids = (stepIndex: number, attempt = 1) => ({ workflowId: wf, stepIndex, attempt });
const nonce = 'bm9uY2Utb2YtdGhlLWF0dGVtcHQ';
const scheduled = (i: number, attempt = 1): WorkflowEvent => ({ type: 'StepScheduled', data: { ...ids(i, attempt), stepId: steps[i]!.id } });
const started = (i: number, attempt = 1): WorkflowEvent => ({ type: 'StepStarted', data: { ...ids(i, attempt), stepId: steps[i]!.id, startedAt: now, nonce } });
const succeeded = (i: number, attempt = 1): WorkflowEvent => ({ type: 'StepSucceeded', data: { ...ids(i, attempt), stepId: steps[i]!.id, output: {} } });
const workflowStarted: WorkflowEvent = {
  type: 'WorkflowStarted',
  data: { workflowId: wf, nodeId: 'n1', siteId: 'dc1', operation: 'deploy', profile: { id: 'deploy', version: 2 }, steps, startedAt: now },
};
const POWER = steps.findIndex((s, i) => s.id === 'power.set' && steps[i + 1]?.id === 'wait.agentJoined');
const resetFailed = (attempt: number) => ({ ...ids(POWER, attempt), code: 'AGENT_FAILED', message: 'REDFISH_TIMEOUT', retryable: true });

/**
 * Issue 34: a `power.set cycle` attempt that reset the machine and then failed was retried as a bare reset, which the
 * spent one-time PXE override sent into the machine's disk (`supersededBootRegistration.int.test.ts`).
 */
describe('a failed reset of a ramdisk boot', () => {
  it('is the reset right before the ramdisk wait; the boot restarts from its first step', () => {
    expect(steps[0]!.id).toBe('boot.setOnce');
    expect(bootOfReset(steps, POWER)).toBe(0);
    // The boot's first step retries as itself; the deploy's last power cycle boots no ramdisk.
    expect(bootOfReset(steps, 0)).toBeUndefined();
    expect(bootOfReset(steps, steps.length - 1)).toBeUndefined();
    const configured = resolveSteps(configuredDeployProfile, {});
    const configuredPower = configured.findIndex((s, i) => s.id === 'power.set' && configured[i + 1]?.id === 'wait.agentJoined');
    expect(bootOfReset(configured, configuredPower)).toBe(0);
  });

  it('arms the network boot again before the next reset, three resets in all, then fails the workflow', () => {
    let events: WorkflowEvent[] = [workflowStarted, scheduled(0), started(0), succeeded(0), scheduled(POWER), started(POWER)];
    for (const attempt of [1, 2]) {
      const failed = given(events)
        .when(failStep, resetFailed(attempt))
        .then((e) => expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowRewound', 'StepScheduled']));
      expect(failed[1]!.data).toMatchObject({ fromStepIndex: POWER, toStepIndex: 0, code: 'AGENT_FAILED' });
      expect(failed[2]!.data).toMatchObject({ stepIndex: 0, stepId: 'boot.setOnce', attempt: attempt + 1 });
      const next = attempt + 1;
      events = [...events, ...failed, started(0, next), succeeded(0, next), scheduled(POWER, next), started(POWER, next)];
    }
    given(events)
      .when(failStep, resetFailed(3))
      .then((e) => expect(e.map((x) => x.type)).toEqual(['StepFailed', 'WorkflowFailed']));
  });

  it('supersedes the boots of the earlier attempts of the same power step', () => {
    expect(supersededBootIdsOf(ids(POWER, 3))).toEqual([`${wf}-s${POWER}-a2`, `${wf}-s${POWER}-a1`]);
    expect(supersededBootIdsOf(ids(POWER, 1))).toEqual([]);
  });
});
