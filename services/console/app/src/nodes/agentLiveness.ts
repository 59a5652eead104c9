import type { AgentPresence } from '../../../../../schemas/agent/agentPresence.ts';

/** How the node's agent is doing, said plainly: alive (heard within the presence window), silent since when, or never heard. */
export interface Liveness {
  readonly kind: 'alive' | 'silent' | 'never' | 'agentless';
  readonly text: string;
}

/** "12 s", "4 min", "3 h", "2 d": how long ago, as people say it. */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1_000));
  if (s < 60) return `${s} s`;
  if (s < 3_600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3_600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

/**
 * `connected` is the API's verdict (a verified heartbeat within `BC_AGENT_PRESENCE_WINDOW_MS` from an agent of the
 * node's state); the last heartbeat says who and when. Only the API decides alive: the console adds the "how long ago".
 */
export function agentLiveness(node: { agent: 'none' | 'bcd'; connected: boolean; lastHeartbeat: AgentPresence | null }, now: number): Liveness {
  if (node.agent === 'none') return { kind: 'agentless', text: 'Agentless: this node runs no agent, so there is no heartbeat' };
  const heard = node.lastHeartbeat;
  const since = heard ? ago(now - Date.parse(heard.heardAt)) : null;
  if (node.connected && heard) return { kind: 'alive', text: `Alive: ${heard.role} agent ${heard.agentId} heard ${since} ago` };
  if (heard) return { kind: 'silent', text: `Silent: ${heard.role} agent ${heard.agentId} last heard ${since} ago` };
  return { kind: 'never', text: 'No heartbeat heard from an agent of this node' };
}
