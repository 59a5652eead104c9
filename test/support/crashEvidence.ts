import type { NatsConnection } from '@nats-io/transport-node';
import { storedAgentCommands, type StoredAgentCommand } from './agentEvidence.ts';
import { stepIndexOf } from './deployEvidence.ts';
import { openReadModel } from './readModelDb.ts';

/**
 * A deploy's attempts per step once its ramdisk was lost mid-write: the workflow rewound to its boot (attempt 2 of each
 * boot step), the write ran again as attempt 2, and the rest once.
 */
export const deployAttemptsAfterLostWrite: readonly (readonly [string, number])[] = [
  ['boot.setOnce', 2],
  ['power.set', 2],
  ['wait.agentJoined', 2],
  ['image.write', 2],
  ['userdata.write', 1],
  ['boot.clear', 1],
  ['power.set', 1],
];

/** Workflows per operation and state, from the workflows read model: `{ deploy: { completed: 4 } }`. */
export function workflowsByState(dataDir: string): Record<string, Record<string, number>> {
  using db = openReadModel(dataDir, 'workflows');
  const rows = db.prepare('SELECT operation, state, count(*) AS n FROM workflows GROUP BY operation, state').all() as {
    operation: string;
    state: string;
    n: number;
  }[];
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) (out[r.operation] ??= {})[r.state] = r.n;
  return out;
}

/** Per release workflow, how many of its `disk.wipe` steps succeeded with an attested result (SQL on the read model). */
export function attestedWipesPerRelease(dataDir: string): { workflowId: string; attested: number }[] {
  using db = openReadModel(dataDir, 'workflows');
  return db
    .prepare(
      `SELECT w.workflow_id AS workflowId, count(s.step_index) AS attested FROM workflows w
       LEFT JOIN workflow_steps s ON s.workflow_id = w.workflow_id AND s.step_id = 'disk.wipe' AND s.state = 'succeeded' AND json_extract(s.output, '$.attested') = 1
       WHERE w.operation = 'release' GROUP BY w.workflow_id ORDER BY w.workflow_id`,
    )
    .all() as { workflowId: string; attested: number }[];
}

/**
 * What BC_AGENT_COMMANDS says against "no destructive agent command published twice": message ids stored more than
 * once, and destructive steps with more stored commands than attempts, or one command id stored twice. Empty lists
 * when the stream holds each destructive command at most once per attempt.
 */
export async function destructiveCommandsTwice(nc: NatsConnection, dataDir: string) {
  const stored: StoredAgentCommand[] = await storedAgentCommands(nc);
  const perMsgId = new Map<string, number>();
  for (const c of stored) perMsgId.set(c.msgId, (perMsgId.get(c.msgId) ?? 0) + 1);
  using db = openReadModel(dataDir, 'workflows');
  const steps = db.prepare('SELECT workflow_id AS workflowId, step_index AS stepIndex, attempts FROM workflow_steps WHERE destructive = 1').all() as {
    workflowId: string;
    stepIndex: number;
    attempts: number;
  }[];
  const overSent: string[] = [];
  for (const s of steps) {
    const ids = stored
      .filter((c) => c.destructive && c.commandId.startsWith(`${s.workflowId}-s`) && stepIndexOf(c.commandId) === s.stepIndex)
      .map((c) => c.commandId);
    if (ids.length > s.attempts || new Set(ids).size !== ids.length)
      overSent.push(`${s.workflowId} s${s.stepIndex}: ${s.attempts} attempt(s), stored ${ids.join(' ')}`);
  }
  return {
    /** How many destructive commands the stream holds (a check that there was something to count). */
    destructiveStored: stored.filter((c) => c.destructive).length,
    msgIdsStoredTwice: [...perMsgId.entries()].filter(([, n]) => n !== 1).map(([id, n]) => `${id} ×${n}`),
    overSent,
  };
}
