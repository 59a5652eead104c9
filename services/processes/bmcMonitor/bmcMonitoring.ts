import { createHash } from 'node:crypto';
import type { BmcObservation } from '../../../schemas/autonomy/snapshot.ts';
import type { NodeState } from '../../../schemas/metal/nodeState.ts';
import type { NodeView } from '../../../schemas/metal/views.ts';
import { Subjects } from '../../../schemas/subjects.ts';
import type { Effect, Fold, Input, Reaction } from '../../platform/processManager/processManager.ts';
import type { BmcMonitorConfig } from './bmcMonitorConfig.ts';

/** Nodes at rest: a running workflow talks to the BMC itself and fails on its own if the BMC is gone. */
export const probedStates: ReadonlySet<NodeState> = new Set<NodeState>(['enrolled', 'ready', 'deployed', 'rescue', 'failed']);

/** One `power.get` exchange with a node's BMC through its site agent: the node as the round saw it. */
export interface PowerProbe {
  readonly node: NodeView;
  readonly round: number;
}

/** A verified answer to a probe (a probe that got none is no reading: the site agent being down says nothing of the BMC). */
export interface BmcReading {
  readonly node: NodeView;
  /** The probe's command id: the maintenance command it leads to derives its id from it. */
  readonly probeId: string;
  readonly outcome: { readonly ok: true } | { readonly ok: false; readonly detail: string };
  /** When the answer came (ms since the epoch). */
  readonly at: number;
}

export interface BmcMonitorModel {
  readonly settings: Pick<BmcMonitorConfig, 'mode' | 'failuresBeforeMaintenance'>;
  /** The resting nodes as of the last tick (read from the nodes read model then, by the host's tick fold). */
  resting: readonly NodeView[];
  /** Ticks so far: a probe's attempt number. */
  round: number;
  /** Failed reads in a row, per node that was read at least once. */
  readonly failures: Map<string, number>;
  /** Nodes whose last reading moved their count (a sensor publishes only then). */
  readonly moved: Set<string>;
}

export function bmcMonitorModel(settings: BmcMonitorModel['settings']): BmcMonitorModel {
  return { settings, resting: [], round: 0, failures: new Map(), moved: new Set() };
}

type BmcFold = Fold<never, PowerProbe, BmcReading>;
type BmcInput = Input<never, BmcReading>;

/** Counts rounds and readings; the resting nodes are set from the read model before a tick is folded. */
export function evolveBmcMonitor(model: BmcMonitorModel, input: BmcFold): void {
  if (input.type === 'tick') model.round++;
  if (input.type !== 'observed') return;
  const { node, outcome } = input.observation;
  const before = model.failures.get(node.nodeId);
  const failures = outcome.ok ? 0 : (before ?? 0) + 1;
  model.failures.set(node.nodeId, failures);
  if (before === failures) model.moved.delete(node.nodeId);
  else model.moved.add(node.nodeId);
}

const nodeKey = (nodeId: string) => `node:${nodeId}`;

/**
 * A tick: a probe of every resting node, one per node at a time (a node still being probed is skipped). A reading:
 * in `sensor` mode the node's record is published when its count moved; in `direct` mode after
 * `failuresBeforeMaintenance` failed reads in a row the node goes into maintenance (source `bmc`, unless it already
 * is in maintenance), and the first good read clears maintenance the BMC caused.
 */
export function decideBmcMonitor(input: BmcInput, model: BmcMonitorModel): readonly Reaction<PowerProbe>[] {
  if (input.type === 'tick') {
    return model.resting.map((node) => ({ key: nodeKey(node.nodeId), coalesce: true, effects: [{ kind: 'task', task: { node, round: model.round } }] }));
  }
  if (input.type !== 'observed') return [];
  const { node, outcome, probeId, at } = input.observation;
  const failures = model.failures.get(node.nodeId) ?? 0;
  const react = (effect: Effect<PowerProbe>) => [{ key: nodeKey(node.nodeId), effects: [effect] }];
  if (model.settings.mode === 'sensor') {
    // A sensor's input, not a decision: a steady fleet publishes nothing.
    if (!model.moved.has(node.nodeId)) return [];
    const observation: BmcObservation = {
      nodeId: node.nodeId,
      siteId: node.siteId,
      consecutiveFailures: failures,
      lastError: outcome.ok ? null : outcome.detail.slice(0, 300),
      at: new Date(at).toISOString(),
    };
    return react({ kind: 'publish', subject: Subjects.bmcObservation(node.nodeId), data: observation, msgId: `bmco-${probeId}` });
  }
  const lost = !outcome.ok && failures >= model.settings.failuresBeforeMaintenance && !node.maintenance;
  const recovered = outcome.ok && node.maintenance && node.maintenanceSource === 'bmc';
  if (!lost && !recovered) return [];
  const payload = { nodeId: node.nodeId, reachable: outcome.ok, ...(outcome.ok ? {} : { detail: outcome.detail.slice(0, 400) }) };
  const commandId = `bmch-${createHash('sha256').update(`${node.nodeId}/${probeId}`).digest('hex').slice(0, 32)}`;
  return react({ kind: 'command', name: 'metal.reportBmcHealth', payload, commandId });
}
