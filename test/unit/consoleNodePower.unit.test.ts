import { describe, expect, it } from 'vitest';
import type { AgentPresence } from '../../schemas/agent/agentPresence.ts';
import type { WorkflowStepView } from '../../schemas/metal/workflowViews.ts';
import { agentLiveness, ago } from '../../services/console/app/src/nodes/agentLiveness.ts';
import { powerActionsFor, powerPayload } from '../../services/console/app/src/nodes/powerActions.ts';
import { lastPowerReading } from '../../services/console/app/src/nodes/powerReading.ts';
import { builtinProfileCatalog } from '../../services/metal/profiles/builtin.ts';

const step = (stepId: string, state: WorkflowStepView['state'], output: unknown, endedAt: string | null): WorkflowStepView => ({
  stepIndex: 0,
  stepId,
  runsOn: 'site',
  destructive: false,
  params: {},
  state,
  attempts: 1,
  output,
  errorCode: null,
  error: null,
  rejectedResults: 0,
  startedAt: endedAt,
  endedAt,
});

describe('console node power', () => {
  it('reads the newest power state any succeeded power step reported, across the node’s workflows', () => {
    const workflows = [
      { workflowId: 'wf-new', steps: [step('power.get', 'succeeded', { powerState: 'Off' }, '2026-01-01T00:10:00.000Z')] },
      {
        workflowId: 'wf-old',
        steps: [
          step('power.set', 'succeeded', { action: 'cycle', before: 'Off', after: 'On', resetTypes: [] }, '2026-01-01T00:20:00.000Z'),
          // A failed step says nothing about the power, whatever its output.
          step('power.set', 'failed', { after: 'Off', action: 'off' }, '2026-01-01T00:30:00.000Z'),
          step('image.write', 'succeeded', { bytesWritten: 1, sha256: 'x' }, '2026-01-01T00:40:00.000Z'),
        ],
      },
    ];
    expect(lastPowerReading(workflows)).toEqual({ state: 'On', at: '2026-01-01T00:20:00.000Z', workflowId: 'wf-old', stepId: 'power.set' });
    expect(
      lastPowerReading([{ workflowId: 'wf', steps: [step('power.get', 'succeeded', { powerState: '<b>On</b>' }, '2026-01-01T00:00:00.000Z')] }]),
    ).toBeNull();
    expect(lastPowerReading([])).toBeNull();
  });

  it('offers operators the power buttons on an idle ready or deployed node, as built-in remediation profiles', () => {
    const ids = (role: Parameters<typeof powerActionsFor>[0], state: string, workflowId: string | null = null) =>
      powerActionsFor(role, { state: state as 'ready', workflowId }).map((a) => a.id);
    expect(ids('operator', 'ready')).toEqual(['check', 'on', 'off', 'cycle']);
    expect(ids('admin', 'deployed')).toEqual(['check', 'on', 'off', 'cycle']);
    expect(ids('operator', 'deployed', 'wf-1')).toEqual([]);
    expect(ids('operator', 'failed')).toEqual([]);
    for (const role of ['tenant', 'viewer', 'approver'] as const) expect(ids(role, 'ready')).toEqual([]);
    const builtIn = new Map(builtinProfileCatalog.map((p) => [p.id, p]));
    for (const action of powerActionsFor('operator', { state: 'ready', workflowId: null })) {
      const profile = builtIn.get(action.profile);
      expect(profile?.role).toBe('remediate');
      // The button asks for destruction exactly when the profile's steps destroy: else the API refuses (NOT_PERMITTED).
      expect(profile!.steps.some((s) => s.destructive)).toBe(action.destructive);
      expect(powerPayload(action, 'n1')).toEqual({ nodeId: 'n1', profile: action.profile, allowDestructive: action.destructive });
    }
  });

  it('says plainly whether the node’s agent is alive, silent since when, or never heard', () => {
    const heard: AgentPresence = {
      agentId: 'bcd-n1',
      role: 'node',
      heardAt: '2026-01-01T00:00:00.000Z',
      startedAt: null,
      lastError: null,
      drivers: [],
      modules: [],
    };
    const now = Date.parse('2026-01-01T00:04:10.000Z');
    expect(agentLiveness({ agent: 'bcd', connected: true, lastHeartbeat: heard }, now)).toEqual({
      kind: 'alive',
      text: 'Alive: node agent bcd-n1 heard 4 min ago',
    });
    expect(agentLiveness({ agent: 'bcd', connected: false, lastHeartbeat: heard }, now)).toEqual({
      kind: 'silent',
      text: 'Silent: node agent bcd-n1 last heard 4 min ago',
    });
    expect(agentLiveness({ agent: 'bcd', connected: false, lastHeartbeat: null }, now).kind).toBe('never');
    expect(agentLiveness({ agent: 'none', connected: false, lastHeartbeat: null }, now).kind).toBe('agentless');
    expect([0, 59_400, 3_599_000, 7_200_000, 172_800_000].map(ago)).toEqual(['0 s', '59 s', '59 min', '2 h', '2 d']);
  });
});
