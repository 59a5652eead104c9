export {
  startBmcSimulator,
  type BmcSimulator,
  type BmcSimulatorOptions,
  type BmcSimulatorState,
  type BootEvent,
  type BootListener,
  type PowerLossListener,
  type RequestLogEntry,
  type SimSystem,
} from './simulator.ts';
export { BmcDialects, defaultQuirks, type BmcDialectName, type BmcQuirks } from './quirks.ts';
export type { SystemIdentity } from './treeShape.ts';
export { setHostAddress } from './hostAddress.ts';
export { RedfishTrees, SiteMachineTrees, redfishFixturesRoot, redfishTreePath, type RedfishTreeName } from './fixtures.ts';
export { TaskOutcomes, type TaskOutcome } from './tasks.ts';
export type { FirmwareImage } from './firmware.ts';
export type { SimPowerState } from './power.ts';
