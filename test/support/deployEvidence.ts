import type { NatsConnection } from '@nats-io/transport-node';
import { journalRows, simJournalDirs, storedAgentCommands, type JournalRow, type StoredAgentCommand } from './agentEvidence.ts';
import { openReadModel } from './readModelDb.ts';

export interface StepRow {
  step_index: number;
  step_id: string;
  destructive: number;
  state: string;
  attempts: number;
  output: string | null;
  rejected_results: number;
}

/** The steps of one workflow as the workflows read model holds them (a fresh read-only open each call). */
export function workflowSteps(dataDir: string, workflowId: string): { state: string | undefined; steps: StepRow[] } {
  using db = openReadModel(dataDir, 'workflows');
  const wf = db.prepare('SELECT state FROM workflows WHERE workflow_id = ?').get(workflowId) as { state: string } | undefined;
  const steps = db
    .prepare('SELECT step_index, step_id, destructive, state, attempts, output, rejected_results FROM workflow_steps WHERE workflow_id = ? ORDER BY step_index')
    .all(workflowId) as StepRow[];
  return { state: wf?.state, steps };
}

/**
 * What a finished deploy left behind, from three independent places: the workflow's steps (read model), every
 * message of BC_AGENT_COMMANDS, and the journals of the agents that executed commands (site agent, ramdisk).
 */
export async function deployEvidence(options: { nc: NatsConnection; dataDir: string; siteId: string; nodeId: string; workflowId: string }) {
  const { nc, dataDir, siteId, nodeId, workflowId } = options;
  const ofWorkflow = (id: string) => id.startsWith(`${workflowId}-s`);
  const dirs = simJournalDirs(dataDir, siteId, nodeId);
  const stored: StoredAgentCommand[] = await storedAgentCommands(nc);
  const journal: JournalRow[] = [...journalRows(dirs.site), ...journalRows(dirs.ramdisk)].filter((r) => ofWorkflow(r.commandId));
  return {
    ...workflowSteps(dataDir, workflowId),
    /** Every stored agent command of the whole stream (to check message ids stay unique). */
    allStored: stored,
    stored: stored.filter((c) => ofWorkflow(c.commandId)),
    journal,
  };
}

/** `<workflowId>-s<index>-a<attempt>` → step index. */
export const stepIndexOf = (commandId: string): number => Number(/-s(\d+)-a\d+$/.exec(commandId)?.[1] ?? -1);
