import { describe, expect, it } from 'vitest';
import { nodesChangedBy } from '../../services/console/app/src/live/nodeChanges.ts';
import { workflowOutcome } from '../../services/console/app/src/workflows/workflowOutcome.ts';

describe('console live node changes', () => {
  const nodes = [
    { nodeId: 'n1', workflowId: 'wf-a' },
    { nodeId: 'n2', workflowId: null },
  ];

  it("re-reads a node on its running workflow's batches (regression: issue 37, waiting-for-capacity stayed up)", () => {
    expect(nodesChangedBy({ subject: 'bc.evt.metal.workflow.wf-a' }, nodes)).toEqual(['n1']);
  });

  it("re-reads a node on its own subject, and nothing on another workflow's or module's batches", () => {
    expect(nodesChangedBy({ subject: 'bc.evt.metal.node.n2' }, nodes)).toEqual(['n2']);
    expect(nodesChangedBy({ subject: 'bc.evt.metal.workflow.wf-b' }, nodes)).toEqual([]);
    expect(nodesChangedBy({ subject: 'bc.evt.vps.instance.i1' }, nodes)).toEqual([]);
  });
});

describe('console workflow outcome', () => {
  it('says cancelling, not failed, while a cancel waits (regression: issue 37)', () => {
    expect(workflowOutcome({ state: 'cancelling', error: 'operator asked', failedStep: null })).toEqual({
      kind: 'cancelling',
      text: 'Cancelling (a running step is finished first): operator asked',
    });
    expect(workflowOutcome({ state: 'cancelled', error: 'operator asked', failedStep: null })?.kind).toBe('cancelled');
  });

  it('says failed, with the step, only of a failed workflow; nothing of a running or completed one', () => {
    expect(workflowOutcome({ state: 'failed', error: 'disk gone', failedStep: 'disk.wipe' })?.text).toBe('Failed at disk.wipe: disk gone');
    expect(workflowOutcome({ state: 'running', error: null, failedStep: null })).toBeNull();
    expect(workflowOutcome({ state: 'completed', error: null, failedStep: null })).toBeNull();
  });
});
