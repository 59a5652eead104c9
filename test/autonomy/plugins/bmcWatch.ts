// An example plugin that joins fleet autonomy, written against the SDK's public entry only.
import { defineBinding, definePlugin, defineSensor, remediateWith, type Signal } from '../../../plugins/sdk/index.ts';

/** A BMC that missed a read or two (below the maintenance hysteresis) on a node at rest: worth a harmless check. */
export const flakyBmcSensor = defineSensor({
  name: 'bmc-watch',
  emits: ['bmc-flaky'],
  assess(snapshot, settings) {
    const nodes = new Map(snapshot.nodes.map((n) => [n.nodeId, n]));
    const signals: Signal[] = [];
    for (const probe of snapshot.bmc) {
      const node = nodes.get(probe.nodeId);
      if (!node || !['ready', 'deployed'].includes(node.state)) continue;
      if (probe.consecutiveFailures === 0 || probe.consecutiveFailures >= settings.bmcFailuresBeforeSignal) continue;
      signals.push({
        kind: 'bmc-flaky',
        sensor: 'bmc-watch',
        key: node.nodeId,
        target: { type: 'node', id: node.nodeId },
        siteId: node.siteId,
        detail: `${probe.consecutiveFailures} missed BMC reads`,
        facts: {},
        controlPlane: node.controlPlane,
      });
    }
    return { assessed: snapshot.bmc.length, signals };
  },
});

export default definePlugin({
  id: 'bmc-watch',
  version: '1.0.0',
  sensors: [flakyBmcSensor],
  // The built-in `bmc-check` profile reads the power state and changes nothing: an advisory remediation.
  bindings: [defineBinding({ signal: 'bmc-flaky', category: 'bmc-recheck', plan: remediateWith('bmc-check') })],
  policies: [
    {
      category: 'bmc-recheck',
      owner: 'bmc-watch',
      disposition: 'auto',
      kind: 'advisory',
      advancement: false,
      approvalTimeoutMs: 3_600_000,
      description: 'A BMC that missed a read is checked again (bmc-check, as metal.remediate)',
    },
  ],
});
