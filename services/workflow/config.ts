import { z } from 'zod';
import type { CapacityCaps } from '../../schemas/metal/workflow.ts';
import { DEFAULT_RAMDISK_BOOT_BUDGET_MS } from '../../schemas/trust/ramdiskBoot.ts';
import { loadEnvSettings } from '../platform/envSettings.ts';

/**
 * The workflow engine's settings, read from the environment by the same names the platform config would use.
 * Caps count workflows in flight per site: deploys (`BC_MAX_DEPLOYS_PER_SITE`) and release wipes (`BC_MAX_WIPES_PER_SITE`);
 * and per tenant across its sites, by default (`BC_MAX_DEPLOYS_PER_TENANT`, `BC_MAX_WIPES_PER_TENANT`; unset: no cap
 * per tenant) unless the tenant has its own (`vps.setTenantCaps`).
 */
export const WorkflowConfig = z.object({
  maxDeploysPerSite: z.coerce.number().int().min(1).default(10),
  maxWipesPerSite: z.coerce.number().int().min(1).default(10),
  maxDeploysPerTenant: z.coerce.number().int().min(1).optional(),
  maxWipesPerTenant: z.coerce.number().int().min(1).optional(),
  /** JetStream ack wait of step work; executors heartbeat at a third of it, so a dead executor's work returns this soon. */
  workAckWaitMs: z.coerce.number().int().min(1_000).default(30_000),
  /** Step attempts one executor process runs at once. */
  executorConcurrency: z.coerce.number().int().min(1).default(64),
  /**
   * Workflows in flight across the fleet, every operation (inspections too): each holds at most one step attempt at a
   * time, so when this is no more than the attempts the executors run at once, a scheduled step never waits in the
   * work queue behind thousands of others. Unset: `executorConcurrency` (one executor process, as `compact` runs).
   */
  maxWorkflowsInFlight: z.coerce.number().int().min(1).optional(),
  /**
   * A waiting step is woken by the result as it is stored; it also looks the result up directly this often, which
   * only matters for a result stored while the executor's watch was not running.
   */
  resultRecheckMs: z.coerce.number().int().min(10).default(10_000),
  /**
   * An agent inside a machine heartbeats every 10 s while it runs a command; silent this long, it counts as lost
   * (`AGENT_LOST`) and the operation restarts from the boot that started it.
   */
  agentHeartbeatTimeoutMs: z.coerce.number().int().min(1_000).default(45_000),
  /**
   * How long a machine has from the reset of a ramdisk boot to fetch its boot script: without the fetch the boot is
   * lost (`BOOT_LOST`) and the workflow restarts from the boot, as often as `wait.agentJoined` has attempts.
   */
  ramdiskBootBudgetMs: z.coerce.number().int().min(1_000).default(DEFAULT_RAMDISK_BOOT_BUDGET_MS),
});
export type WorkflowConfig = z.infer<typeof WorkflowConfig>;

export function loadWorkflowConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<WorkflowConfig> = {}): WorkflowConfig {
  const names = {
    maxDeploysPerSite: 'BC_MAX_DEPLOYS_PER_SITE',
    maxWipesPerSite: 'BC_MAX_WIPES_PER_SITE',
    maxDeploysPerTenant: 'BC_MAX_DEPLOYS_PER_TENANT',
    maxWipesPerTenant: 'BC_MAX_WIPES_PER_TENANT',
    workAckWaitMs: 'BC_WORK_ACK_WAIT_MS',
    executorConcurrency: 'BC_EXECUTOR_CONCURRENCY',
    maxWorkflowsInFlight: 'BC_MAX_WORKFLOWS_IN_FLIGHT',
    resultRecheckMs: 'BC_RESULT_RECHECK_MS',
    agentHeartbeatTimeoutMs: 'BC_AGENT_HEARTBEAT_TIMEOUT_MS',
    ramdiskBootBudgetMs: 'BC_RAMDISK_BOOT_BUDGET_MS',
  };
  return loadEnvSettings(WorkflowConfig, names, env, overrides);
}

/** The caps admission counts against, from the settings. */
export function capsOf(config: WorkflowConfig): CapacityCaps {
  const tenant = {
    ...(config.maxDeploysPerTenant ? { deploys: config.maxDeploysPerTenant } : {}),
    ...(config.maxWipesPerTenant ? { wipes: config.maxWipesPerTenant } : {}),
  };
  return {
    deploys: config.maxDeploysPerSite,
    wipes: config.maxWipesPerSite,
    tenant,
    workflows: config.maxWorkflowsInFlight ?? config.executorConcurrency,
  };
}
