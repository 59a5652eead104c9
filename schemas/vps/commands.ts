// The VPS commands live one file per aggregate: tenantCommands, poolCommands, flavorCommands, accountCommands,
// instanceCommands. These two instance shapes are re-exported here only for services/vps/reconciler/*, which another
// change moves; import instanceCommands.ts instead, and drop this file once nothing imports it.
export type { DesiredInstanceState, ObservedInstanceState } from './instanceCommands.ts';
