import { EventCatalog } from '../../../schemas/eventCatalog.ts';
import { ramdiskBootEvents, type BootContestReason, type RamdiskBootEvent } from '../../../schemas/trust/ramdiskBoot.ts';
import { defineAggregate } from '../../platform/commands/commandDefinition.ts';

export interface RamdiskBootState {
  /** The boot's one ramdisk join token and the site ticket it was minted for; null before the script was fetched. */
  readonly issued: { readonly ticketId: string; readonly tokenId: string; readonly at: string } | null;
  readonly contested: { readonly reason: BootContestReason; readonly detail: string } | null;
}

/** One ramdisk boot of a workflow attempt (`bc.evt.trust.ramdiskBoot.<bootId>`): its token, and whether it is contested. */
export const ramdiskBootAggregate = defineAggregate<RamdiskBootState, RamdiskBootEvent>({
  module: 'trust',
  type: 'ramdiskBoot',
  initialState: { issued: null, contested: null },
  catalog: new EventCatalog(ramdiskBootEvents),
  evolve(state, event) {
    switch (event.type) {
      case 'RamdiskBootTokenIssued':
        return { ...state, issued: { ticketId: event.data.ticketId, tokenId: event.data.tokenId, at: event.data.issuedAt } };
      case 'RamdiskBootContested':
        return { ...state, contested: { reason: event.data.reason, detail: event.data.detail } };
    }
  },
});
