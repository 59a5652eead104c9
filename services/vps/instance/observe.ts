import { isDeepStrictEqual } from 'node:util';
import { RecordInstanceObserved } from '../../../schemas/vps/instanceCommands.ts';
import type { InstanceEvent } from '../../../schemas/vps/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { heldByAnother } from '../../../schemas/vps/instanceState.ts';
import { instanceAggregate } from './instance.ts';

/**
 * `vps.recordInstanceObserved` (engine: the reconciler). The provider id and addresses persist until a report
 * replaces them; `message` belongs to one report. A report that changes nothing appends nothing, so the reconciler
 * may send what it sees on every pass.
 */
export const recordInstanceObserved = defineCommand({
  name: 'vps.recordInstanceObserved',
  exposure: ['engine'],
  schema: RecordInstanceObserved,
  aggregate: instanceAggregate,
  aggregateId: (command) => command.instanceId,
  decide(command, state): InstanceEvent[] {
    // The first tenant to put an event on this subject holds the id; a second tenant that raced for it gets nothing.
    if (heldByAnother(state, command.tenantId)) throw new DomainError('ALREADY_EXISTS', `instance id ${command.instanceId} belongs to another tenant`);
    const next = {
      observed: command.observed,
      providerInstanceId: command.providerInstanceId ?? state.providerInstanceId,
      addresses: command.addresses ?? state.addresses,
      message: command.message ?? null,
    };
    const current = { observed: state.observed, providerInstanceId: state.providerInstanceId, addresses: state.addresses, message: state.message };
    if (isDeepStrictEqual(next, current)) return [];
    return [{ type: 'InstanceObserved', data: { instanceId: command.instanceId, tenantId: command.tenantId, ...next, addresses: [...next.addresses] } }];
  },
});
