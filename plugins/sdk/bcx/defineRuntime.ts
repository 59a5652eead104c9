import { RuntimeInstanceStatus, type BcxManifest } from '../../../schemas/bcx/bcxProtocol.ts';
import { defineBcxPlugin, type BcxPluginDefinition } from './serveBcxPlugin.ts';

/** The instance spec `apply` gets, as `bcd node` records it (user data and a restore's snapshot on the first only). */
export interface RuntimeInstanceSpec {
  readonly id: string;
  readonly desiredState: 'running' | 'stopped';
  readonly [field: string]: unknown;
}

export interface RuntimeDefinition {
  readonly manifest: Omit<BcxManifest, 'kinds'>;
  list(): Promise<RuntimeInstanceStatus[]>;
  apply(spec: RuntimeInstanceSpec): Promise<RuntimeInstanceStatus>;
  remove(id: string): Promise<void>;
}

/**
 * A `runtime` plugin (walkthrough 4): `list`, `apply` and `remove` with positional JSON arguments. What it answers is
 * checked here, so a runtime that answers the wrong shape fails its own call instead of confusing the daemon.
 */
export function defineRuntime(runtime: RuntimeDefinition): BcxPluginDefinition {
  return defineBcxPlugin({
    manifest: { ...runtime.manifest, kinds: ['runtime'] },
    operations: {
      list: async () => RuntimeInstanceStatus.array().parse(await runtime.list()),
      apply: async (spec) => RuntimeInstanceStatus.parse(await runtime.apply(spec as RuntimeInstanceSpec)),
      remove: async (id) => {
        if (typeof id !== 'string') throw new TypeError('remove takes the instance id');
        await runtime.remove(id);
        return null;
      },
    },
  });
}
