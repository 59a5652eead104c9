import { jetstreamManager } from '@nats-io/jetstream';
import type { PassMarker, SensorReport, Signal } from '../../schemas/autonomy/signals.ts';
import { Streams } from '../../schemas/subjects.ts';
import { publishPassOn, waitForEngine } from './passes.ts';
import { firstLaneBindings } from '../../services/autonomy/bindings.ts';
import { decisionAggregate, type DecisionState } from '../../services/autonomy/decision/decision.ts';
import { builtinPolicies, PolicyCatalog } from '../../services/autonomy/policies.ts';
import { firstLaneSensors } from '../../services/autonomy/sensors/firstLanes.ts';
import { CommandBus } from '../../services/platform/commands/commandBus.ts';
import { serveCommands } from '../../services/commands/commandResponder.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { AutonomyEngine, type AutonomyEngineOptions } from '../../services/processes/autonomyEngine/engine.ts';
import type { PolicyDeclaration } from '../../schemas/autonomy/policies.ts';
import { startBackbone } from '../support/backboneFixture.ts';

export const allOk: SensorReport[] = firstLaneSensors.map((s) => ({ sensor: s.name, ok: true, assessed: 1, signals: 0 }));

/** A backbone with the command responder; engines are started by the test (one or several replicas). */
export async function startAutonomy(options: { responders?: number; projectors?: boolean } = {}) {
  const env = await startBackbone({ projectors: options.projectors ?? false });
  // More than one responder: two command buses (as two processes would) race on the same aggregates under OCC. They
  // serve only the queue group: routed by aggregate, one of them would decide every budget command alone.
  const responders = [serveCommands(env.nc, env.bus, env.log, undefined, { partitions: false })];
  for (let i = 1; i < (options.responders ?? 1); i++)
    responders.push(serveCommands(env.nc, new CommandBus(env.store, allCommands, { retries: 20 }), env.log, undefined, { partitions: false }));
  const engines: AutonomyEngine[] = [];
  const disposeBackbone = env[Symbol.asyncDispose].bind(env);
  return Object.assign(env, {
    engines,
    async startEngine(options: Partial<AutonomyEngineOptions> & { policies?: PolicyCatalog } = {}) {
      const engine = new AutonomyEngine(
        env.nc,
        env.store,
        {
          policies: new PolicyCatalog(),
          bindings: firstLaneBindings,
          sensors: firstLaneSensors,
          settleMs: 0,
          budget: 1_000,
          budgetWindowMs: 3_600_000,
          ...options,
        },
        env.log,
      );
      await engine.start();
      engines.push(engine);
      return engine;
    },
    /** Publishes one pass (its signals, then its marker) the way `fleet-sensors` does. */
    publishPass: (signals: readonly Signal[], reports: readonly SensorReport[] = allOk): Promise<PassMarker> => publishPassOn(env.nc, signals, reports),
    /** Waits until the engines' durable has every published pass acked. */
    settled: (timeoutMs = 30_000) => waitForEngine(env.nc, timeoutMs),
    /** A pass, then wait for it to be decided. */
    async pass(signals: readonly Signal[], reports: readonly SensorReport[] = allOk) {
      const marker = await this.publishPass(signals, reports);
      await this.settled();
      return marker;
    },
    decision: async (id: string): Promise<DecisionState> => (await env.bus.repository.load(decisionAggregate, id)).state,
    /** Every event of `type` in the log under `filter`. */
    async eventsOf(filter: string, type?: string) {
      const out: { subject: string; type: string; data: any }[] = [];
      const jsm = await jetstreamManager(env.nc);
      const info = await jsm.streams.info(Streams.events.name, { subjects_filter: filter });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        for await (const batch of env.store.readAfter(subject, 0))
          for (const e of batch.batch.events) if (!type || e.type === type) out.push({ subject, type: e.type, data: e.data });
      }
      return out;
    },
    async [Symbol.asyncDispose]() {
      for (const e of engines) await e.stop();
      for (const r of responders) r.unsubscribe();
      await disposeBackbone();
    },
  });
}

export const signalOf = (kind: string, key: string, extra: Partial<Signal> = {}): Signal => ({
  kind,
  sensor: firstLaneSensors.find((s) => s.emits.includes(kind))!.name,
  key,
  target: { type: kind === 'instance-error' ? 'instance' : 'node', id: key },
  siteId: 'dc1',
  facts: kind === 'node-failed' ? { operation: 'inspect' } : {},
  detail: `${kind} on ${key}`,
  controlPlane: false,
  ...extra,
});

/** The builtin declarations with some fields changed (short timeouts and cooldowns for tests). */
export const policiesWith = (changes: Record<string, Partial<PolicyDeclaration>>) =>
  new PolicyCatalog(builtinPolicies.map((p) => ({ ...p, ...changes[p.category] })));
