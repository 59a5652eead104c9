import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../schemas/envelope.ts';
import type { PlatformEvent } from '../../schemas/events.ts';
import { StartWorkflow } from '../../schemas/metal/workflowCommands.ts';
import type { WorkflowEvent } from '../../schemas/metal/workflowEvents.ts';
import { FleetModel } from '../../services/processes/orchestrator/fleetModel.ts';
import { decideOrchestration } from '../../services/processes/orchestrator/orchestration.ts';
import { startWorkflow } from '../../services/workflow/workflow/start.ts';
import { wipeAttestationOf, workflowAggregate } from '../../services/workflow/workflow/workflow.ts';

/**
 * Logs written before steps declared their behaviour: `WorkflowStarted` v1 froze steps without `attests` / `records`,
 * and the engine recognised `disk.wipe`, `inventory.read` and `hardware.probe` by id. Such a log must still rebuild to
 * what it meant.
 */
const wf = 'wf-0123456789ab';
const dependencies = { quorum: { approvers: [], threshold: 0, approvalTtlSeconds: 3_600 }, registry: { plugins: new Map() } };
const context = { commandId: 'cmd-00000001', actor: 'test', now: '2026-12-02T12:00:00.000Z', dependencies };
const catalog = workflowAggregate.catalog;
type Started = Extract<WorkflowEvent, { type: 'WorkflowStarted' }>;

/** A workflow run to its end as the engine logs it now; `outputOf` gives each step's output. */
function ranToEnd(operation: 'release' | 'inspect', inputs: Record<string, unknown>, outputOf: (stepId: string) => unknown): WorkflowEvent[] {
  const start = StartWorkflow.parse({ workflowId: wf, nodeId: 'n1', siteId: 'dc1', operation, inputs });
  const started = startWorkflow.decide(start, workflowAggregate.initialState, context)[0] as Started;
  const events: WorkflowEvent[] = [started];
  started.data.steps.forEach(({ id: stepId }, stepIndex) => {
    const ids = { workflowId: wf, stepIndex, stepId, attempt: 1 };
    events.push(
      { type: 'StepScheduled', data: ids },
      { type: 'StepStarted', data: { ...ids, startedAt: context.now, nonce: 'bm9uY2Utb2YtdGhlLWF0dGVtcHQ' } },
      { type: 'StepSucceeded', data: { ...ids, output: outputOf(stepId) } },
    );
  });
  events.push({ type: 'WorkflowCompleted', data: { workflowId: wf } });
  return events;
}

/** The log as stored; `asV1` writes `WorkflowStarted` as a writer before the declarations did. */
function stored(events: readonly WorkflowEvent[], asV1: boolean): Pick<StoredEvent, 'type' | 'version' | 'data'>[] {
  return events.map((event) => {
    const written = catalog.write(event);
    if (!asV1 || event.type !== 'WorkflowStarted') return written;
    const steps = event.data.steps.map(({ attests: _a, records: _r, ...step }) => step);
    return { ...written, version: 1, data: { ...(written.data as object), steps } };
  });
}

const read = (log: readonly Pick<StoredEvent, 'type' | 'version' | 'data'>[]) => log.map((s) => catalog.read(s) as WorkflowEvent);
const rebuilt = (log: readonly Pick<StoredEvent, 'type' | 'version' | 'data'>[]) => read(log).reduce(workflowAggregate.evolve, workflowAggregate.initialState);

describe('WorkflowStarted v1 (steps frozen before they declared their behaviour)', () => {
  it('rebuilds a release to the same state, its wipe still attested', () => {
    const events = ranToEnd('release', {}, (id) => (id === 'disk.wipe' ? { attested: true } : {}));
    const v1 = stored(events, true);
    expect(v1[0]).toMatchObject({ version: 1 });
    expect(JSON.stringify(v1[0]!.data)).not.toMatch(/attests/);
    expect(stored(events, false)[0]).toMatchObject({ version: 2 });
    const state = rebuilt(v1);
    expect(state).toEqual(rebuilt(stored(events, false)));
    expect(state.exists && state.steps.find((s) => s.id === 'disk.wipe')).toMatchObject({ attests: 'wipe' });
    expect(wipeAttestationOf(state)).toEqual({ attested: true });
  });

  it('still makes the orchestrator record both inventories of an in-band inspection', () => {
    const inventory = { cpus: 8 };
    const inBand = { disks: [] };
    const events = ranToEnd('inspect', { inBand: true }, (id) => (id === 'inventory.read' ? inventory : id === 'hardware.probe' ? inBand : {}));
    const reactionsTo = (log: ReturnType<typeof stored>) => {
      const model = new FleetModel();
      const folded = read(log) as PlatformEvent[];
      for (const event of folded.slice(0, -1)) model.apply(event);
      return decideOrchestration({ type: 'event', event: folded.at(-1)! } as never, model, { deploys: 1, wipes: 1 });
    };
    const reactions = reactionsTo(stored(events, true));
    expect(reactions).toEqual(reactionsTo(stored(events, false)));
    expect(reactions[0]!.effects[0]).toMatchObject({ name: 'metal.recordInventory', payload: { nodeId: 'n1', workflowId: wf, inventory, inBand } });
  });

  it('gives the implicit declarations to v1 steps of those ids only, and to no v2 step', () => {
    const [started] = ranToEnd('release', {}, () => ({})) as [Started];
    const plugin = { ...started.data.steps[0]!, id: 'acme.secureErase', plugin: 'acme' };
    const undeclared = started.data.steps.map(({ attests: _a, records: _r, ...step }) => step);
    const v1 = read([{ type: 'WorkflowStarted', version: 1, data: { ...started.data, steps: [...undeclared, plugin] } }])[0] as Started;
    expect(v1.data.steps.map((s) => s.attests ?? null)).toEqual([...undeclared.map((s) => (s.id === 'disk.wipe' ? 'wipe' : null)), null]);
    const v2 = read([{ type: 'WorkflowStarted', version: 2, data: { ...started.data, steps: undeclared } }])[0] as Started;
    expect(v2.data.steps.some((s) => s.attests)).toBe(false);
  });
});
