import { describe, expect, it } from 'vitest';
import type { AssignmentState } from '../../schemas/fleet/assignmentState.ts';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { idFor } from '../../schemas/ids.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { assignmentAggregate } from '../../services/fleet/assignment/assignment.ts';
import { applyPlan } from '../../services/fleet/assignment/applyPlan.ts';
import { rolloutAggregate } from '../../services/fleet/rollout/rollout.ts';
import type { AggregateLoader } from '../../services/platform/commands/commandDefinition.ts';
import { RolloutControllerModel } from '../../services/processes/rolloutController/controllerModel.ts';
import { decidePlanApply } from '../../services/processes/rolloutController/planApplyReactions.ts';
import { loaderOf } from './assignmentLog.ts';
import { observed } from './rolloutControllerSpec.ts';
import { started } from './rolloutLog.ts';

const plan = { nginx: '1.24.0', openssl: '3.2.0' };
const assigned: AssignmentState = { exists: true, nodeId: 'n1', template: 'web', pins: [], plan, planDigest: 'd'.repeat(64) };
const rolloutOf = (events: readonly RolloutEvent[]) => events.reduce((s, e) => rolloutAggregate.evolve(s, e), rolloutAggregate.initialState);

/** The decider over a fake log: nodes, the host's assignment, the nginx rollout's events. */
async function run(nodeId: string, assignment: AssignmentState | undefined, rollout: readonly RolloutEvent[] = [], commandId = 'cmd-apply-1') {
  const base = loaderOf({ nodes: { n1: 'deployed', n2: 'deployed' }, assignments: assignment ? { [nodeId]: assignment } : {} });
  const load = (async (aggregate: { type: string }, id: string) =>
    aggregate.type === 'rollout' ? (id === 'nginx' ? rolloutOf(rollout) : rolloutAggregate.initialState) : base(aggregate as never, id)) as AggregateLoader;
  const parsed = applyPlan.schema.parse({ nodeId });
  const dependencies = await applyPlan.dependencies!(parsed, load);
  try {
    return applyPlan.decide(parsed, assignment ?? assignmentAggregate.initialState, {
      commandId,
      actor: 'spec',
      now: '2026-12-07T00:00:00.000Z',
      dependencies,
    });
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code };
    throw err;
  }
}

describe('fleet.applyPlan', () => {
  it('records the request with the pinned plan and the command id; the assignment is unchanged', async () => {
    const events = await run('n1', assigned);
    expect(events).toEqual([{ type: 'HostPlanApplyRequested', data: { nodeId: 'n1', requestId: 'cmd-apply-1', plan, planDigest: assigned.planDigest } }]);
    expect(assignmentAggregate.evolve(assigned, (events as never[])[0]!)).toBe(assigned);
  });

  it('refuses NOT_FOUND for a node that is not enrolled, PRECONDITION_FAILED for a host with no plan pinned', async () => {
    expect(await run('ghost', undefined)).toEqual({ code: 'NOT_FOUND' });
    expect(await run('n1', undefined)).toEqual({ code: 'PRECONDITION_FAILED' });
  });

  it('refuses ILLEGAL_TRANSITION while a rollout that counts the host is in progress on a module of its plan', async () => {
    expect(await run('n1', assigned, [started(['n1', 'n2'])])).toEqual({ code: 'ILLEGAL_TRANSITION' });
    // A rollout of other hosts leaves this one to its operator; an ended one owns nothing.
    expect(await run('n1', assigned, [started(['n2'])])).toHaveLength(1);
    expect(await run('n1', assigned, [started(['n1']), { type: 'RolloutAborted', data: { rolloutId: 'nginx-1' } }])).toHaveLength(1);
  });
});

describe('rollout controller: a plan apply request', () => {
  const request = (requestId = 'cmd-apply-1') => ({
    type: 'HostPlanApplyRequested' as const,
    data: { nodeId: 'n1', requestId, plan, planDigest: assigned.planDigest },
  });
  const task = (module: string, version: string, requestId = 'cmd-apply-1') => ({
    kind: 'task',
    task: { type: 'plan.apply', commandId: idFor('plan-apply', `${requestId}/${module}`), requestId, host: 'n1', module, version },
  });

  it('asks the host for each module of the plan, with ids derived from the request: a redelivery asks the same', () => {
    const model = new RolloutControllerModel();
    const expected = [{ key: 'plan/n1', effects: [task('nginx', '1.24.0'), task('openssl', '3.2.0')] }];
    expect(decidePlanApply(request(), model)).toEqual(expected);
    expect(decidePlanApply(request(), model)).toEqual(expected);
    expect(decidePlanApply(request('cmd-apply-2'), model)[0]!.effects[0]).toEqual(task('nginx', '1.24.0', 'cmd-apply-2'));
  });

  it('skips what the host reports active at that version, and a module a rollout counting the host owns', () => {
    const model = new RolloutControllerModel();
    model.apply(observed('n1', '1.24.0', 1_000));
    expect(decidePlanApply(request(), model)).toEqual([{ key: 'plan/n1', effects: [task('openssl', '3.2.0')] }]);
    model.apply(observed('n1', '1.24.0', 2_000, { state: 'failed' }));
    // A failed report of that version is not installed: asked again.
    expect(decidePlanApply(request(), model)).toEqual([{ key: 'plan/n1', effects: [task('nginx', '1.24.0'), task('openssl', '3.2.0')] }]);
    model.apply({ type: 'event', event: started(['n1']) });
    expect(decidePlanApply(request(), model)).toEqual([{ key: 'plan/n1', effects: [task('openssl', '3.2.0')] }]);
    model.apply(observed('n1', '3.2.0', 3_000, { module: 'openssl' }));
    expect(decidePlanApply(request(), model)).toEqual([]);
  });
});
