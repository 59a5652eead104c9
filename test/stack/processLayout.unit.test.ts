import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { processGroups, stackServiceGroups } from '../../services/stack/processLayout.ts';
import { thrownCode } from '../support/thrownCode.ts';
import { tempDir } from '../support/natsServer.ts';

const stackGroups = stackServiceGroups(true);

describe('processGroups', () => {
  it('compact: the step path shares one process, started first (projectors first within it); every other group keeps its own', () => {
    expect(processGroups('compact', stackGroups)).toEqual([
      ['projectors', 'commands', 'join', 'workflow-orchestrator', 'workflow-executor'],
      ['secret-grants'],
      ['bmc-monitor'],
      ['vps-reconciler'],
      ['fleet-sensors', 'autonomy-engine', 'rollout-controller'],
      ['api'],
      ['plugins'],
    ]);
  });

  it('split: the groups as given', () => {
    expect(processGroups('split', stackGroups)).toEqual(stackGroups);
  });

  it('runs every service exactly once in either layout, and never merges a group that holds a service off the step path', () => {
    const mixed = [['api', 'commands'], ['projectors'], ['workflow-executor']];
    for (const layout of ['compact', 'split'] as const) {
      const groups = processGroups(layout, mixed);
      expect(groups.flat().sort()).toEqual(mixed.flat().sort());
      expect(groups).toContainEqual(['api', 'commands']);
    }
    expect(processGroups('compact', [['api']])).toEqual([['api']]);
  });
});

describe('BC_PROCESS_LAYOUT', () => {
  it('defaults to compact, takes split, and refuses anything else with a stable code', () => {
    using dir = tempDir();
    expect(loadConfig({ BC_DATA_DIR: dir.path }).processLayout).toBe('compact');
    expect(loadConfig({ BC_DATA_DIR: dir.path, BC_PROCESS_LAYOUT: 'split' }).processLayout).toBe('split');
    expect(thrownCode(() => loadConfig({ BC_DATA_DIR: dir.path, BC_PROCESS_LAYOUT: 'one-big-process' }))).toBe('VALIDATION_FAILED');
  });
});
