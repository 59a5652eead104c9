import type { DesiredInstanceState } from '../../../schemas/vps/instanceCommands.ts';
import { TenantInstance } from '../../../schemas/vps/tenantCommands.ts';
import type { InstanceEvent } from '../../../schemas/vps/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { heldByAnother } from '../../../schemas/vps/instanceState.ts';
import { reservationOf, tenantRef } from '../../../schemas/vps/tenantState.ts';
import { instanceAggregate } from './instance.ts';

/**
 * A desired-state verb. The instance must be one the tenant requested and still holds: anything else is NOT_FOUND,
 * exactly as if it did not exist, so a tenant never learns about another tenant's instance.
 */
const desiredStateCommand = <const N extends string>(name: N, desired: DesiredInstanceState) =>
  defineCommand({
    name,
    exposure: ['operator', 'tenant'],
    schema: TenantInstance,
    aggregate: instanceAggregate,
    aggregateId: (command) => command.instanceId,
    dependencies: async (command, load) => ({ tenant: await load(tenantRef, command.tenantId) }),
    decide(command, state, { dependencies }): InstanceEvent[] {
      const { tenantId, instanceId } = command;
      if (heldByAnother(state, tenantId)) throw new DomainError('NOT_FOUND', `instance ${instanceId} not found`);
      // The tenant state is this process's latest view, which may predate the request when another process took it;
      // once the instance's own subject names the tenant (the reconciler's first report), that settles ownership.
      const reservation = reservationOf(dependencies.tenant, instanceId);
      if (!reservation && state.tenantId !== tenantId) throw new DomainError('NOT_FOUND', `instance ${instanceId} not found`);
      // Released means gone (deleted, or failed before it existed): deleting it again has nothing left to do.
      if (reservation?.status === 'released') {
        if (desired === 'deleted') return [];
        throw new DomainError('NOT_FOUND', `instance ${instanceId} not found`);
      }
      // A remediation holds the instance until it ends (its steps may be stopping or starting it themselves).
      if (state.remediation) throw new DomainError('INSTANCE_BUSY', `instance ${instanceId} is being remediated (workflow ${state.remediation.workflowId})`);
      // The same desired state again is a no-op, unless a failed remediation left the instance needing attention: saying
      // what it should be is how its tenant takes it back.
      if (state.desired === desired && !state.attention) return [];
      if (state.desired === 'deleted')
        throw new DomainError('ILLEGAL_TRANSITION', `instance ${instanceId} is being deleted; it cannot be ${desired === 'running' ? 'started' : 'stopped'}`);
      return [{ type: 'InstanceDesiredStateSet', data: { instanceId, tenantId, desired } }];
    },
  });

/** `vps.startInstance`: the tenant wants it running (it is from creation on). */
export const startInstance = desiredStateCommand('vps.startInstance', 'running');
/** `vps.stopInstance`: the tenant wants it stopped; its quota stays reserved. */
export const stopInstance = desiredStateCommand('vps.stopInstance', 'stopped');
/** `vps.deleteInstance`: for good; the reconciler releases the quota once the provider has deleted it. */
export const deleteInstance = desiredStateCommand('vps.deleteInstance', 'deleted');
