import { describe, expect, it } from 'vitest';
import { instanceActions, instanceActionsFor, instancePayload } from '../../services/console/app/src/vps/instanceActions.ts';

const ids = (role: Parameters<typeof instanceActionsFor>[0], desired: 'running' | 'stopped' | 'deleted', state = 'running') =>
  instanceActionsFor(role, { desired, state: state as 'running' }).map((a) => a.id);

describe('console VPS instance actions', () => {
  it('offers start or stop by what the instance is wanted to be, delete and remediate until it is deleted', () => {
    expect(ids('tenant', 'running')).toEqual(['stop', 'delete', 'remediate']);
    expect(ids('operator', 'stopped', 'stopped')).toEqual(['start', 'delete', 'remediate']);
    expect(ids('admin', 'deleted', 'deleting')).toEqual([]);
    expect(ids('operator', 'running', 'deleted')).toEqual([]);
  });

  it('offers viewers and approvers nothing', () => {
    expect(ids('viewer', 'running')).toEqual([]);
    expect(ids('approver', 'stopped')).toEqual([]);
  });

  it('sends the instance and its tenant, and a remediation’s profile and whether it may destroy', () => {
    const instance = { tenantId: 'acme', instanceId: 'web-1' };
    const [start, , , remediate] = instanceActions;
    expect(start!.command).toBe('vps.startInstance');
    expect(instancePayload(start!, instance)).toEqual({ tenantId: 'acme', instanceId: 'web-1' });
    expect(instancePayload(remediate!, instance, { profile: ' probe ', allowDestructive: true })).toEqual({
      tenantId: 'acme',
      instanceId: 'web-1',
      profile: 'probe',
      allowDestructive: true,
    });
  });
});
