/** Engine commands are sent by the platform's process-manager host; the executor sends its own the same way. */
export { isSettledRefusal, sendEngineCommand, type EngineCommandOptions } from '../platform/processManager/engineCommands.ts';
