import { RecordBootToken, type RamdiskBootEvent } from '../../../schemas/trust/ramdiskBoot.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { ramdiskBootAggregate } from './ramdiskBoot.ts';

/**
 * `pki.recordBootToken`: binds a boot to the one ramdisk join token minted for its site ticket. The same ticket may
 * record again (the site asked again after a reply was lost: the newer token replaces the older, which no wait
 * accepts any more); a different ticket for the same boot contests it, and a contested boot mints nothing.
 */
export const recordBootToken = defineCommand({
  name: 'pki.recordBootToken',
  exposure: ['join'],
  schema: RecordBootToken,
  aggregate: ramdiskBootAggregate,
  aggregateId: (command) => command.bootId,
  decide(command, state, { now }): RamdiskBootEvent[] {
    if (state.contested) throw new DomainError('BOOT_CONTESTED', `boot ${command.bootId} is contested (${state.contested.reason})`);
    const { bootId, boot, siteId, nodeId, tokenId } = command;
    if (state.issued?.tokenId === tokenId) return [];
    if (state.issued && state.issued.ticketId !== boot.ticketId) {
      const detail = `a second boot ticket was presented for ${bootId}`;
      return [{ type: 'RamdiskBootContested', data: { bootId, workflowId: boot.workflowId, siteId, nodeId, reason: 'SECOND_TICKET', detail } }];
    }
    const { workflowId, stepIndex, attempt, ticketId } = boot;
    return [{ type: 'RamdiskBootTokenIssued', data: { bootId, workflowId, siteId, nodeId, stepIndex, attempt, ticketId, tokenId, issuedAt: now } }];
  },
});
