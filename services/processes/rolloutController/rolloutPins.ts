import { idFor } from '../../../schemas/ids.ts';
import type { RolloutRun } from '../../fleet/rollout/rollout.ts';
import type { EngineCommand } from '../../platform/processManager/processManager.ts';

/**
 * The `fleet.pinModule` of each host an ended rollout left on a known version, so the assignments say what the hosts
 * run (the drift sensor compares the two; the next rollout plans from the pins): a host its rollback restored healthy
 * is pinned to the previous version, any other host that reported the new version healthy to the new one. A host that
 * failed, timed out or was never asked keeps its pin (what it runs is not known, or did not change).
 *
 * Decided on the rollout's end event (completed, aborted, rolled back) and nowhere else, each with an id derived from
 * the rollout and the host: a redelivered end event, or one a restarted controller reads again, sends the same
 * commands, and the bus answers the repeats as the duplicates they are. The pins are the controller's, not the
 * assignment's folding rollout events: an aggregate decides on its own stream only.
 */
export function pinsOfEndedRollout<T>(run: RolloutRun): EngineCommand<T>[] {
  const restored = run.rollback?.restored ?? {};
  const targets = new Set(run.rollback?.targets ?? []);
  const pins: [host: string, version: string][] = [
    ...run.progress.waves
      .flat()
      .filter((host) => !targets.has(host) && run.progress.outcomes[host] === 'healthy')
      .map((host): [string, string] => [host, run.toVersion]),
    ...[...targets].filter((host) => restored[host] === 'healthy').map((host): [string, string] => [host, run.fromVersion]),
  ];
  return pins.map(([nodeId, version]) => ({
    kind: 'command',
    name: 'fleet.pinModule',
    payload: { nodeId, module: run.module, version },
    commandId: pinCommandId(run.rolloutId, nodeId),
  }));
}

/** The id of the pin an ended rollout sends for `host`: one per rollout and host. */
export const pinCommandId = (rolloutId: string, host: string): string => idFor('rollout-pin', `${rolloutId}/${host}`);
