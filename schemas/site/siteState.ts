import { aggregateRef } from '../aggregateRef.ts';

export type SiteState =
  { readonly exists: false } | { readonly exists: true; readonly siteId: string; readonly name: string; readonly provisioningCidrs: readonly string[] };

/** What another module may read of a site (`bc.evt.site.site.<siteId>`). */
export const siteRef = aggregateRef<SiteState>('site', 'site');
