import { describe, expect, it } from 'vitest';
import type { CommandResult } from '../../schemas/api.ts';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import type { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { builtinProfiles } from '../../services/metal/profiles/builtin.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { claimAttempt } from '../../services/workflow/attemptClaim.ts';
import { workflowAggregate, type WorkflowState } from '../../services/workflow/workflow/workflow.ts';

const workflowId = 'wf-00000000000b';
const started: WorkflowEvent = {
  type: 'WorkflowStarted',
  data: {
    workflowId,
    nodeId: 'n1',
    siteId: 'dc1',
    operation: 'release',
    profile: { id: 'release', version: 1 },
    steps: resolveSteps(builtinProfiles.release, {}),
    startedAt: '2026-12-04T07:00:00.000Z',
  },
};
const scheduled = (stepIndex: number, attempt: number): WorkflowEvent => ({
  type: 'StepScheduled',
  data: { workflowId, stepIndex, stepId: started.data.steps[stepIndex]!.id, attempt },
});
const fold = (events: WorkflowEvent[]): WorkflowState => events.reduce((s, e) => workflowAggregate.evolve(s, e), workflowAggregate.initialState);

/** A repository whose reads of the log answer `read` (as a replica at that point would), holding nothing cached. */
function readingAs(read: WorkflowState): AggregateRepository {
  const snapshot = (state: WorkflowState) => ({ state, seq: 1, commands: new Map() });
  const load = async () => snapshot(read);
  return { cachedOrInitial: () => snapshot(workflowAggregate.initialState), load, loadAccepting: load } as unknown as AggregateRepository;
}

function recordingSender() {
  const sent: { name: string; payload: unknown }[] = [];
  const send = async (name: string, payload: unknown): Promise<CommandResult> => {
    sent.push({ name, payload });
    return { events: [{ type: 'StepStarted', data: { startedAt: '2026-12-04T07:00:01.000Z', nonce: 'n' } }] } as unknown as CommandResult;
  };
  return { sent, send };
}

describe('claiming the attempt a work message is for', () => {
  it('says the read is behind, and starts nothing, when the log as read does not show the step scheduled yet', async () => {
    const { sent, send } = recordingSender();
    const claim = await claimAttempt(readingAs(fold([started, scheduled(0, 1)])), send, { workflowId, stepIndex: 1, attempt: 1 });
    expect(claim.kind).toBe('behind');
    expect(sent).toEqual([]);
  });

  it('says the read is behind for a workflow the read does not show at all', async () => {
    const { send } = recordingSender();
    expect((await claimAttempt(readingAs(workflowAggregate.initialState), send, { workflowId, stepIndex: 0, attempt: 1 })).kind).toBe('behind');
  });

  it('starts the scheduled attempt once the read shows it', async () => {
    const { sent, send } = recordingSender();
    const claim = await claimAttempt(readingAs(fold([started, scheduled(0, 1)])), send, { workflowId, stepIndex: 0, attempt: 1 });
    expect(claim.kind).toBe('claimed');
    expect(sent.map((s) => [s.name, (s.payload as { attempt: number }).attempt])).toEqual([['workflow.startStep', 1]]);
  });

  it('settles a message for an attempt the step already counted (an old message after the step went back to pending)', async () => {
    const { sent, send } = recordingSender();
    const rewound: WorkflowEvent = { type: 'WorkflowRewound', data: { workflowId, fromStepIndex: 0, toStepIndex: 0, code: 'AGENT_LOST', at: 't' } };
    const startedOnce: WorkflowEvent = {
      type: 'StepStarted',
      data: { workflowId, stepIndex: 0, stepId: started.data.steps[0]!.id, attempt: 1, startedAt: 't', nonce: 'n' },
    };
    const claim = await claimAttempt(readingAs(fold([started, scheduled(0, 1), startedOnce, rewound])), send, { workflowId, stepIndex: 0, attempt: 1 });
    expect(claim.kind).toBe('settled');
    expect(sent).toEqual([]);
  });

  it("starts from the snapshot this process's own append leaves, when the work message is handled before the append's answer was folded", async () => {
    const { sent, send } = recordingSender();
    let held = { state: fold([started, scheduled(0, 1)]), seq: 1, commands: new Map() };
    const reads: string[] = [];
    const repository = {
      cachedOrInitial: () => held,
      load: async () => (reads.push('load'), held),
      loadAccepting: async () => (reads.push('loadAccepting'), held),
    } as unknown as AggregateRepository;
    // The answer to the `completeStep` that scheduled step 1 is still on its way through promise continuations.
    void Promise.resolve()
      .then(() => undefined)
      .then(() => undefined)
      .then(() => {
        held = { state: fold([started, scheduled(0, 1), scheduled(1, 1)]), seq: 2, commands: new Map() };
      });
    const claim = await claimAttempt(repository, send, { workflowId, stepIndex: 1, attempt: 1 });
    expect(claim.kind).toBe('claimed');
    expect(sent.map((s) => [s.name, (s.payload as { stepIndex: number }).stepIndex])).toEqual([['workflow.startStep', 1]]);
    expect(reads).not.toContain('loadAccepting');
  });
});
