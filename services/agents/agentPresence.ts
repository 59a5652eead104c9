import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { heartbeatSignedBy, openAgentHeartbeat, type AgentHeartbeat, type SignedAgentHeartbeat } from '../../schemas/agent/agentHeartbeat.ts';
import type { AgentPresence, AgentPresenceLookup } from '../../schemas/agent/agentPresence.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import type { Logger } from '../platform/logger.ts';
import { watchConnectionState } from '../platform/nats/connectionState.ts';
import { agentAggregate } from '../trust/agent/agent.ts';

/** The heartbeats a process hears, by node: `connected` and `host-silent` read them. */
export interface AgentPresenceView extends AgentPresenceLookup {
  /** Every node heard from since this view started, with its last verified heartbeat. */
  all(): { nodeId: string; presence: AgentPresence; alive: boolean }[];
  /** Since when silence means something: the view's start, or when this process's NATS connection last came back. */
  listeningSinceMs(): number;
  /** Resolves once the key look-ups started so far are over (tests). */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export interface AgentPresenceOptions {
  repository: AggregateRepository;
  /** A node's agent is alive while its last verified heartbeat is at most this old (`BC_AGENT_PRESENCE_WINDOW_MS`). */
  windowMs: number;
  log: Logger;
  now?: () => number;
  /** How long a looked-up agent key is trusted before it is read again (a rotation or a new registration). */
  keyTtlMs?: number;
  /**
   * Hears each presence heartbeat (one without a `commandId`) once it verified, never one that did not: what the host
   * reports (its modules for the rollout controller, its instances for the VPS reconciler). A command's "still working"
   * heartbeat reports nothing of the host, so it is not passed on: taken as a report, it would say the host runs no
   * module, no instance.
   */
  onVerified?: (heartbeat: AgentHeartbeat, receivedAtMs: number) => void;
}

interface Heard {
  readonly heartbeat: AgentHeartbeat;
  readonly signed: SignedAgentHeartbeat;
  readonly receivedAtMs: number;
}

const MAX_KEYS = 100_000;
/** A key read less than this long ago is not read again for a heartbeat that does not match it (a forger's flood). */
const MIN_RELOAD_MS = 5_000;

/**
 * Liveness of every agent inside a machine, in memory: one core subscription to `bc.site.*.hb.*`, each heartbeat
 * verified against the registered key of an agent of that very node (a ramdisk or `bcd node`, never a site agent; the
 * subject must name the node the heartbeat claims, so under broker auth only that node's agent can send it) before it
 * counts. Nothing is written anywhere: a steady fleet appends nothing to the log, and a node falls out of the window by
 * the clock alone when its agent stops, whatever else happens. Keys are read through the repository, kept `keyTtlMs`
 * and read again when a heartbeat names another key (a rotation), at most once per 5 s per agent; verification is
 * then one Ed25519 check per heartbeat, done as it arrives, so a forged one cannot push a valid one out.
 */
export function startAgentPresence(nc: NatsConnection, options: AgentPresenceOptions): AgentPresenceView {
  const now = options.now ?? Date.now;
  const keyTtlMs = options.keyTtlMs ?? 60_000;
  const startedMs = now();
  const connection = watchConnectionState(nc, now);
  const latest = new Map<string, AgentPresence & { heardAtMs: number }>();
  const keys = new Map<string, { state: AgentState; readAtMs: number }>();
  const waiting = new Map<string, Heard>();
  const loading = new Map<string, Promise<void>>();

  const accept = ({ heartbeat, signed, receivedAtMs }: Heard, agent: AgentState): void => {
    const ofThisNode =
      agent.exists &&
      agent.role !== 'site' &&
      agent.siteId === heartbeat.siteId &&
      agent.nodeId === heartbeat.nodeId &&
      heartbeatSignedBy(signed, agent.publicKey);
    if (!ofThisNode) {
      options.log.debug({ agentId: heartbeat.agentId, nodeId: heartbeat.nodeId }, 'heartbeat refused: not signed by an agent of this node');
      return;
    }
    const before = latest.get(heartbeat.nodeId);
    if (before && before.heardAtMs > receivedAtMs) return;
    const heardAt = { agentId: heartbeat.agentId, role: agent.role, heardAt: new Date(receivedAtMs).toISOString(), heardAtMs: receivedAtMs };
    // A command's "still working" heartbeat proves the agent alive and says nothing else: what the same agent's last
    // presence heartbeat reported (its drivers, modules, instances) still stands.
    if (heartbeat.commandId !== undefined && before?.agentId === heartbeat.agentId) {
      latest.set(heartbeat.nodeId, { ...before, ...heardAt });
      return;
    }
    latest.set(heartbeat.nodeId, {
      ...heardAt,
      startedAt: heartbeat.startedAt ?? null,
      lastError: heartbeat.lastError ?? null,
      drivers: heartbeat.drivers ?? [],
      modules: heartbeat.modules ?? [],
      instances: heartbeat.instances ?? [],
    });
    if (heartbeat.commandId === undefined) options.onVerified?.(heartbeat, receivedAtMs);
  };

  const readKey = (agentId: string): void => {
    if (loading.has(agentId)) return;
    const read = options.repository.load(agentAggregate, agentId).then(
      ({ state }) => {
        if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
        keys.set(agentId, { state, readAtMs: now() });
        const heard = waiting.get(agentId);
        waiting.delete(agentId);
        if (heard) accept(heard, state);
      },
      (err: unknown) => options.log.debug({ err, agentId }, 'agent key not read now'),
    );
    loading.set(
      agentId,
      read.finally(() => loading.delete(agentId)),
    );
  };

  const sub: Subscription = nc.subscribe(Subjects.allAgentHeartbeats, {
    callback: (_err, msg) => {
      let opened: ReturnType<typeof openAgentHeartbeat>;
      try {
        opened = openAgentHeartbeat(msg.json());
      } catch {
        return;
      }
      if (!opened || msg.subject !== Subjects.agentHeartbeat(opened.heartbeat.siteId, opened.heartbeat.nodeId)) return;
      const heard: Heard = { ...opened, receivedAtMs: now() };
      const agentId = opened.heartbeat.agentId;
      const known = keys.get(agentId);
      const age = known ? now() - known.readAtMs : Infinity;
      if (known && age < keyTtlMs && known.state.exists && known.state.keyId === opened.signed.keyId) return accept(heard, known.state);
      if (age < MIN_RELOAD_MS) return;
      waiting.set(agentId, heard);
      readKey(agentId);
    },
  });

  const presenceOf = (nodeId: string) => {
    const heard = latest.get(nodeId);
    if (!heard) return undefined;
    const { heardAtMs: _, ...presence } = heard;
    return { presence, alive: now() - heard.heardAtMs <= options.windowMs };
  };

  return {
    presenceOf,
    all: () => [...latest.keys()].map((nodeId) => ({ nodeId, ...presenceOf(nodeId)! })),
    listeningSinceMs: () => Math.max(startedMs, connection.upSinceMs()),
    settled: async () => {
      await Promise.all(loading.values());
    },
    stop: async () => sub.unsubscribe(),
  };
}
