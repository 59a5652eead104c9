import type { Signal } from '../../../schemas/autonomy/signals.ts';
import { hostModulesSensor } from './hostModules.ts';
import { hostSilenceOf } from './hostSilence.ts';
import { instanceHostSensor } from './instanceHost.ts';
import { templateClosureDriftSensor } from './templateClosureDrift.ts';
import { defineSensor } from './sensor.ts';

const age = (now: string, since: string) => Date.parse(now) - Date.parse(since);

/** BMC unreachable: the monitor's consecutive failed reads reached the hysteresis threshold. */
export const bmcSensor = defineSensor({
  name: 'bmc',
  emits: ['bmc-unreachable'],
  assess(snapshot, settings) {
    const nodes = new Map(snapshot.nodes.map((n) => [n.nodeId, n]));
    const signals: Signal[] = [];
    for (const probe of snapshot.bmc) {
      const node = nodes.get(probe.nodeId);
      if (!node || probe.consecutiveFailures < settings.bmcFailuresBeforeSignal) continue;
      signals.push({
        kind: 'bmc-unreachable',
        sensor: 'bmc',
        key: node.nodeId,
        target: { type: 'node', id: node.nodeId },
        siteId: node.siteId,
        detail: `${probe.consecutiveFailures} failed BMC reads in a row${probe.lastError ? `: ${probe.lastError}` : ''}`.slice(0, 400),
        facts: {},
        controlPlane: node.controlPlane,
      });
    }
    return { assessed: snapshot.bmc.length, signals };
  },
});

/** A node in `failed`, with the operation that failed (what a retry would run again). */
export const nodeStateSensor = defineSensor({
  name: 'node-state',
  emits: ['node-failed'],
  assess(snapshot) {
    const signals: Signal[] = snapshot.nodes
      .filter((n) => n.state === 'failed' && n.failure?.operation)
      .map((n) => ({
        kind: 'node-failed',
        sensor: 'node-state',
        key: n.nodeId,
        target: { type: 'node' as const, id: n.nodeId },
        siteId: n.siteId,
        detail: `${n.failure!.operation} failed${n.failure!.failedStep ? ` at ${n.failure!.failedStep}` : ''}: ${n.failure!.reason}`.slice(0, 400),
        facts: { operation: n.failure!.operation! },
        controlPlane: n.controlPlane,
      }));
    return { assessed: snapshot.nodes.length, signals };
  },
});

/** A step running far past its timeout (per workflow), or work waiting for capacity too long (per site). */
export const workSensor = defineSensor({
  name: 'work',
  emits: ['step-overdue', 'queue-stale'],
  assess(snapshot, settings) {
    const signals: Signal[] = [];
    for (const step of snapshot.runningSteps) {
      const ran = age(snapshot.at, step.startedAt);
      if (ran <= step.timeoutMs * settings.overdueFactor) continue;
      signals.push({
        kind: 'step-overdue',
        sensor: 'work',
        key: step.workflowId,
        target: { type: 'workflow', id: step.workflowId },
        siteId: step.siteId,
        detail: `step ${step.stepId} on ${step.nodeId} has run ${Math.round(ran / 1000)} s (timeout ${Math.round(step.timeoutMs / 1000)} s)`,
        facts: {},
        controlPlane: false,
      });
    }
    const oldestWaiting = new Map<string, number>();
    for (const n of snapshot.nodes) {
      if (n.waitingReason === null) continue;
      const waited = age(snapshot.at, n.updatedAt);
      if (waited > settings.staleQueueMs) oldestWaiting.set(n.siteId, Math.max(oldestWaiting.get(n.siteId) ?? 0, waited));
    }
    for (const [siteId, waited] of oldestWaiting) {
      signals.push({
        kind: 'queue-stale',
        sensor: 'work',
        key: siteId,
        target: { type: 'site', id: siteId },
        siteId,
        detail: `work at site ${siteId} has waited ${Math.round(waited / 60_000)} min for capacity`,
        facts: {},
        controlPlane: false,
      });
    }
    return { assessed: snapshot.runningSteps.length + snapshot.nodes.length, signals };
  },
});

/** A VPS instance desired running but observed in error. */
export const vpsSensor = defineSensor({
  name: 'vps',
  emits: ['instance-error'],
  assess(snapshot) {
    const signals: Signal[] = snapshot.instances
      .filter((i) => i.desired === 'running' && i.observed === 'error')
      .map((i) => ({
        kind: 'instance-error',
        sensor: 'vps',
        key: i.instanceId,
        target: { type: 'instance' as const, id: i.instanceId },
        siteId: null,
        detail: `instance of ${i.tenantId} is in error${i.message ? `: ${i.message}` : ''}`.slice(0, 400),
        facts: {},
        controlPlane: false,
      }));
    return { assessed: snapshot.instances.length, signals };
  },
});

/**
 * An agent whose key is older than the rotation age; and one asked to rotate that has not, long after it should have
 * asked (every 10 minutes) and done so: its rotation lane cannot act (the agent is gone, or may not ask), which is a
 * failing signal for an operator, not a warning in the agent's own log.
 */
export const agentKeySensor = defineSensor({
  name: 'agent-keys',
  emits: ['agent-key-old', 'agent-key-rotation-stalled'],
  assess(snapshot, settings) {
    const signals: Signal[] = [];
    for (const a of snapshot.agents) {
      const target = { type: 'agent' as const, id: a.agentId };
      if (age(snapshot.at, a.keySince) > settings.keyRotationAgeMs) {
        const detail = `${a.role} agent key in use for ${Math.floor(age(snapshot.at, a.keySince) / 86_400_000)} days`;
        signals.push({ kind: 'agent-key-old', sensor: 'agent-keys', key: a.agentId, target, siteId: a.siteId, detail, facts: {}, controlPlane: false });
      }
      const asked = a.rotationRequestedAt === null ? 0 : age(snapshot.at, a.rotationRequestedAt);
      if (asked > settings.keyRotationStallMs) {
        const detail = `${a.role} agent was asked to rotate its key ${Math.floor(asked / 60_000)} min ago and has not`;
        signals.push({
          kind: 'agent-key-rotation-stalled',
          sensor: 'agent-keys',
          key: a.agentId,
          target,
          siteId: a.siteId,
          detail,
          facts: {},
          controlPlane: false,
        });
      }
    }
    return { assessed: snapshot.agents.length, signals };
  },
});

/**
 * A deployed host whose `bcd node` has not heartbeated for `hostSilentMs`: its agent died, hangs or crash-loops, or the
 * host is down (`hostSilenceOf`: with no heartbeats listened to at all, nothing is judged).
 */
export const hostSilentSensor = defineSensor({
  name: 'host-liveness',
  emits: ['host-silent'],
  assess(snapshot, settings) {
    const silence = hostSilenceOf(snapshot);
    if (!silence) return { assessed: 0, signals: [] };
    const nodes = new Map(snapshot.nodes.map((n) => [n.nodeId, n]));
    const signals: Signal[] = [];
    for (const [nodeId, { silentForMs, lastHeard }] of silence) {
      if (silentForMs <= settings.hostSilentMs) continue;
      const n = nodes.get(nodeId)!;
      signals.push({
        kind: 'host-silent',
        sensor: 'host-liveness',
        key: n.nodeId,
        target: { type: 'node', id: n.nodeId },
        siteId: n.siteId,
        detail: `deployed host's bcd node silent for ${Math.round(silentForMs / 1000)} s${lastHeard ? ` (last heartbeat ${lastHeard})` : ' (no heartbeat heard)'}`,
        facts: {},
        controlPlane: n.controlPlane,
      });
    }
    return { assessed: silence.size, signals };
  },
});

export const firstLaneSensors = [
  bmcSensor,
  nodeStateSensor,
  workSensor,
  vpsSensor,
  agentKeySensor,
  hostSilentSensor,
  instanceHostSensor,
  hostModulesSensor,
  templateClosureDriftSensor,
] as const;
