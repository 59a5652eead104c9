/**
 * The one maintenance rule, held by the API's deciders and the console's buttons alike: a node in maintenance starts
 * no work that would put it (back) into service. Deploy and retry (which re-runs whatever failed, a deploy included)
 * wait until an operator clears maintenance; release, rescue and cancel stay open, as they take the node out of use
 * or let it be looked at.
 */
export const refusedInMaintenance = ['metal.deploy', 'metal.retry'] as const;

/** Whether `command` is refused on a node whose maintenance flag is `maintenance`. */
export const isRefusedInMaintenance = (command: string, maintenance: boolean): boolean =>
  maintenance && (refusedInMaintenance as readonly string[]).includes(command);
