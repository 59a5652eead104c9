import type { FleetSnapshot } from '../../../schemas/autonomy/snapshot.ts';

const age = (now: string, since: string) => Date.parse(now) - Date.parse(since);

/** A deployed host running `bcd` as the sensors judge its silence: how long, and its last heartbeat heard (if any). */
export interface HostSilence {
  readonly silentForMs: number;
  readonly lastHeard: string | undefined;
}

/**
 * The silence of every deployed host that runs `bcd`, counted from the latest of its last verified heartbeat, the
 * node's last change (a deploy that just completed: the host is still booting) and the moment the heartbeats were
 * first listened to (nobody's silence before that is known). Undefined when no heartbeats were listened to at all:
 * then nothing is judged.
 */
export function hostSilenceOf(snapshot: FleetSnapshot): Map<string, HostSilence> | undefined {
  const since = snapshot.heartbeatsSince;
  if (since === null) return undefined;
  const heard = new Map(snapshot.heartbeats.filter((h) => h.role === 'node').map((h) => [h.nodeId, h.heardAt]));
  const silence = new Map<string, HostSilence>();
  for (const n of snapshot.nodes) {
    if (n.state !== 'deployed' || n.agent !== 'bcd') continue;
    const lastHeard = heard.get(n.nodeId);
    const silentForMs = Math.min(age(snapshot.at, since), age(snapshot.at, n.updatedAt), lastHeard ? age(snapshot.at, lastHeard) : Infinity);
    silence.set(n.nodeId, { silentForMs, lastHeard });
  }
  return silence;
}
