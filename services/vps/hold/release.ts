import type { HoldBookEvent } from '../../../schemas/vps/events.ts';
import { ReleaseHold } from '../../../schemas/vps/holdCommands.ts';
import { holdStatusAt } from '../../../schemas/vps/holdState.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { holdBookAggregate } from './holdBook.ts';

/**
 * `vps.releaseHold`: gives a hold's capacity back now. A hold already released or expired holds nothing, so releasing
 * it appends nothing. A tenant's release (`tenantId` set by its route) names only its own holds: another's is
 * HOLD_UNKNOWN, exactly as one that does not exist.
 */
export const releaseHold = defineCommand({
  name: 'vps.releaseHold',
  exposure: ['edge'],
  schema: ReleaseHold,
  aggregate: holdBookAggregate,
  aggregateId: (command) => command.siteId,
  decide(command, state, { now }): HoldBookEvent[] {
    const hold = state.holds[command.holdId];
    const visible = hold && (command.tenantId === undefined || ('tenantId' in hold.holder && hold.holder.tenantId === command.tenantId));
    if (!hold || !visible) throw new DomainError('HOLD_UNKNOWN', `site ${command.siteId} has no hold ${command.holdId}`);
    if (holdStatusAt(hold, Date.parse(now)) !== 'active') return [];
    return [{ type: 'HoldReleased', data: { siteId: command.siteId, holdId: hold.holdId, holder: hold.holder, releasedAt: now } }];
  },
});
