import type { InstanceView, Role } from '../api/shapes.ts';

/** A verb on a VPS instance: the command it sends (`services/vps/instance/desiredState.ts`, `services/workflow/remediateInstance.ts`). */
export interface InstanceAction {
  readonly id: 'start' | 'stop' | 'delete' | 'remediate';
  readonly label: string;
  readonly command: 'vps.startInstance' | 'vps.stopInstance' | 'vps.deleteInstance' | 'vps.remediateInstance';
  readonly consequence: string;
  readonly danger?: boolean;
}

export const instanceActions: readonly InstanceAction[] = [
  { id: 'start', label: 'Start', command: 'vps.startInstance', consequence: 'The instance is wanted running: the reconciler starts it at its provider.' },
  {
    id: 'stop',
    label: 'Stop',
    command: 'vps.stopInstance',
    consequence: 'The instance is wanted stopped: the reconciler stops it at its provider. Its quota stays reserved.',
  },
  {
    id: 'delete',
    label: 'Delete',
    command: 'vps.deleteInstance',
    danger: true,
    consequence: 'The instance is deleted at its provider, for good; its quota is given back once the provider says it is gone.',
  },
  {
    id: 'remediate',
    label: 'Remediate',
    command: 'vps.remediateInstance',
    consequence: 'A profile runs against the instance as a remediate workflow; the instance returns to the state it was in.',
  },
];

/** Who may act on instances: operators, and tenants on their own (the API scopes a tenant token to its tenant). */
const actors: readonly Role[] = ['admin', 'operator', 'tenant'];

/**
 * The verbs offered on an instance now: what its desired state allows (the decider answers a repeat with nothing, and
 * refuses starting or stopping one being deleted). The API may still refuse (a remediation holds the instance:
 * `INSTANCE_BUSY`; a profile that cannot act on an instance: `UNSUPPORTED`), and the dialog shows its code then.
 */
export function instanceActionsFor(role: Role, instance: Pick<InstanceView, 'desired' | 'state'>): InstanceAction[] {
  if (!actors.includes(role) || instance.desired === 'deleted' || instance.state === 'deleted') return [];
  return instanceActions.filter((a) => (a.id === 'start' ? instance.desired !== 'running' : a.id === 'stop' ? instance.desired === 'running' : true));
}

/** The command body: the instance and its tenant (which a tenant token's own replaces), and for a remediation its profile. */
export function instancePayload(
  action: InstanceAction,
  instance: Pick<InstanceView, 'tenantId' | 'instanceId'>,
  remediation: { profile: string; allowDestructive: boolean } = { profile: '', allowDestructive: false },
): object {
  const target = { tenantId: instance.tenantId, instanceId: instance.instanceId };
  return action.id === 'remediate' ? { ...target, profile: remediation.profile.trim(), allowDestructive: remediation.allowDestructive } : target;
}
