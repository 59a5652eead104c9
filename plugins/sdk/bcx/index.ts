/**
 * `better-compute/sdk/bcx`: what a driver plugin for `bcd` is written with. The plugin is a program the daemon starts
 * from its plugins folder (pinned by sha256, sandboxed: see docs/bcx.md); it calls `serveBcxPlugin` with a definition
 * from `defineBcxPlugin` or, for an instances runtime, `defineRuntime`.
 */
export { BcxOperationError, defineBcxPlugin, serveBcxPlugin } from './serveBcxPlugin.ts';
export type { BcxOperation, BcxPluginDefinition } from './serveBcxPlugin.ts';
export { defineRuntime } from './defineRuntime.ts';
export type { RuntimeDefinition, RuntimeInstanceSpec } from './defineRuntime.ts';
export type { BcxManifest, RuntimeInstanceStatus } from '../../../schemas/bcx/bcxProtocol.ts';
