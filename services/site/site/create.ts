import type { SiteEvent } from '../../../schemas/site/events.ts';
import { CreateSite } from '../../../schemas/site/commands.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { DomainError } from '../../../schemas/platformError.ts';
import { siteAggregate } from './site.ts';

export const createSite = defineCommand({
  name: 'site.create',
  exposure: ['operator'],
  schema: CreateSite,
  aggregate: siteAggregate,
  aggregateId: (command) => command.siteId,
  decide(command, state): SiteEvent[] {
    if (state.exists) throw new DomainError('ALREADY_EXISTS', `site ${command.siteId} already exists`);
    return [{ type: 'SiteCreated', data: { siteId: command.siteId, name: command.name, provisioningCidrs: command.provisioningCidrs } }];
  },
});
