import { z } from 'zod';

/**
 * The workflow engine's settings, read from the environment by the same names the platform config would use.
 * Caps count workflows in flight per site: deploys (`BC_MAX_DEPLOYS_PER_SITE`) and release wipes (`BC_MAX_WIPES_PER_SITE`).
 */
export const WorkflowConfig = z.object({
  maxDeploysPerSite: z.coerce.number().int().min(1).default(10),
  maxWipesPerSite: z.coerce.number().int().min(1).default(10),
  /** JetStream ack wait of step work; executors heartbeat at a third of it, so a dead executor's work returns this soon. */
  workAckWaitMs: z.coerce.number().int().min(1_000).default(30_000),
  /** Step attempts one executor process runs at once. */
  executorConcurrency: z.coerce.number().int().min(1).default(64),
  /** How often a waiting step polls for its agent result. */
  resultPollMs: z.coerce.number().int().min(10).default(250),
});
export type WorkflowConfig = z.infer<typeof WorkflowConfig>;

export function loadWorkflowConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<WorkflowConfig> = {}): WorkflowConfig {
  const pick = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  return WorkflowConfig.parse({
    maxDeploysPerSite: pick('BC_MAX_DEPLOYS_PER_SITE'),
    maxWipesPerSite: pick('BC_MAX_WIPES_PER_SITE'),
    workAckWaitMs: pick('BC_WORK_ACK_WAIT_MS'),
    executorConcurrency: pick('BC_EXECUTOR_CONCURRENCY'),
    resultPollMs: pick('BC_RESULT_POLL_MS'),
    ...overrides,
  });
}
