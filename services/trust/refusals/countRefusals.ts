import { CountRefusals } from '../../../schemas/trust/refusals.ts';
import type { RefusalEvent } from '../../../schemas/trust/events.ts';
import { defineCommand } from '../../platform/commands/commandDefinition.ts';
import { refusalsAggregate } from './refusals.ts';

/**
 * `trust.countRefusals`: records one window's count of refusals that left no event of their own (the join and
 * registration services and the result intake, `RefusalTally`). In-process only: nobody but the refusing service may say what it refused.
 */
export const countRefusals = defineCommand({
  name: 'trust.countRefusals',
  exposure: ['join'],
  schema: CountRefusals,
  aggregate: refusalsAggregate,
  aggregateId: (command) => command.kind,
  decide(command): RefusalEvent[] {
    return [{ type: 'RefusalsCounted', data: command }];
  },
});
