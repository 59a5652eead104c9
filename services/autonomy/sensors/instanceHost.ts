import type { Signal } from '../../../schemas/autonomy/signals.ts';
import { instanceKeepingStates } from '../../../schemas/metal/nodeState.ts';
import { hostSilenceOf } from './hostSilence.ts';
import { defineSensor } from './sensor.ts';

/**
 * A metal-pool instance whose node is lost: the node's `bcd node` silent past `hostSilentMs` (as `host-silent` judges
 * it), or the node no longer in a state that keeps its instances. One signal per instance (its key), naming the node
 * and why in `facts`, so the `relocate` lane places it again elsewhere. An instance being deleted is not signalled: its
 * removal goes on where it is. A node the read model does not show is not judged (nothing is known of it).
 */
export const instanceHostSensor = defineSensor({
  name: 'instance-host',
  emits: ['instance-host-lost'],
  assess(snapshot, settings) {
    const nodes = new Map(snapshot.nodes.map((n) => [n.nodeId, n]));
    const silence = hostSilenceOf(snapshot);
    const placed = snapshot.instances.filter((i) => i.placement && i.desired !== 'deleted');
    const signals: Signal[] = [];
    for (const i of placed) {
      const { siteId, nodeId } = i.placement!;
      const node = nodes.get(nodeId);
      if (!node) continue;
      const silentForMs = silence?.get(nodeId)?.silentForMs ?? 0;
      const why = !instanceKeepingStates.has(node.state)
        ? { reason: node.state, detail: `node ${nodeId} is ${node.state}` }
        : node.state === 'deployed' && silentForMs > settings.hostSilentMs
          ? { reason: 'silent', detail: `node ${nodeId}'s bcd node silent for ${Math.round(silentForMs / 1000)} s` }
          : undefined;
      if (!why) continue;
      signals.push({
        kind: 'instance-host-lost',
        sensor: 'instance-host',
        key: i.instanceId,
        target: { type: 'instance', id: i.instanceId },
        siteId,
        detail: `instance of ${i.tenantId} on a lost node: ${why.detail}`.slice(0, 400),
        facts: { siteId, nodeId, reason: why.reason },
        // The decision acts on the instance, never on the node: a control-plane node's instances move like any other's.
        controlPlane: false,
      });
    }
    return { assessed: placed.length, signals };
  },
});
