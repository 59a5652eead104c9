import { setTimeout as sleep } from 'node:timers/promises';
import cliProgress from 'cli-progress';
import type { WorkflowView } from '../../schemas/metal/workflowViews.ts';
import type { ApiClient } from './apiClient.ts';

/**
 * Follows a workflow until it ends: a progress bar on a terminal, one line per step change otherwise (logs, CI).
 * Resolves the final view.
 */
export async function followWorkflow(api: ApiClient, workflowId: string, options: { pollMs?: number; timeoutMs?: number } = {}): Promise<WorkflowView> {
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  const tty = process.stdout.isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar({ format: '{operation} {bar} {value}/{total} steps | {step}', hideCursor: true }, cliProgress.Presets.shades_classic)
    : undefined;
  let seen = '';
  let view: WorkflowView | undefined;
  try {
    for (;;) {
      view = await api.get<WorkflowView>(`/v1/workflows/${encodeURIComponent(workflowId)}`).catch((err: { code?: string }) => {
        if (err.code === 'NOT_FOUND') return undefined; // not projected yet (capped operations wait for a slot)
        throw err;
      });
      if (view) {
        const done = view.steps.filter((s) => s.state === 'succeeded').length;
        const current = view.steps.find((s) => s.state !== 'succeeded' && s.state !== 'pending') ?? view.steps.find((s) => s.state === 'pending');
        const label = current ? `${current.stepId} (${current.state}${current.attempts > 1 ? `, attempt ${current.attempts}` : ''})` : view.state;
        if (bar) {
          if (!seen) bar.start(view.steps.length, done, { operation: view.operation, step: label });
          bar.update(done, { step: label });
          seen = label;
        } else if (label !== seen) {
          console.log(`${new Date().toISOString()} ${view.operation} ${done}/${view.steps.length} ${label}`);
          seen = label;
        }
        if (view.state !== 'running' && view.state !== 'cancelling') return view;
      }
      if (Date.now() > deadline) throw new Error(`workflow ${workflowId} still running after the wait limit`);
      await sleep(options.pollMs ?? 500);
    }
  } finally {
    bar?.stop();
  }
}

/** A one-line summary of each step, for `workflows show` and `nodes show`. */
export function describeSteps(view: WorkflowView): string {
  return view.steps
    .map((s) => {
      const wipe = s.output as { attested?: boolean; unattestedReason?: string } | null;
      const attestation = wipe?.attested === true ? ' (attested)' : wipe?.attested === false ? ` (not attested: ${wipe.unattestedReason ?? 'unknown'})` : '';
      const extra = s.errorCode ? ` ${s.errorCode}: ${s.error ?? ''}` : attestation;
      return `  ${String(s.stepIndex).padStart(2)}. ${s.stepId.padEnd(18)} ${s.runsOn.padEnd(13)} ${s.state.padEnd(9)} attempts=${s.attempts}${s.destructive ? ' destructive' : ''}${extra}`;
    })
    .join('\n');
}
