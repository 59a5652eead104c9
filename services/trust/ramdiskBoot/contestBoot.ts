import { ContestBoot, type RamdiskBootEvent } from '../../../schemas/trust/ramdiskBoot.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { ramdiskBootAggregate } from './ramdiskBoot.ts';

/** `pki.contestBoot`: records the alarm on a boot, once (the first reason stands). */
export const contestBoot = defineCommand({
  name: 'pki.contestBoot',
  exposure: ['join'],
  schema: ContestBoot,
  aggregate: ramdiskBootAggregate,
  aggregateId: (command) => command.bootId,
  decide(command, state): RamdiskBootEvent[] {
    if (state.contested) return [];
    const { bootId, workflowId, siteId, nodeId, reason, detail } = command;
    return [{ type: 'RamdiskBootContested', data: { bootId, workflowId, siteId, nodeId, reason, detail } }];
  },
});
