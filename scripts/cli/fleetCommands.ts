import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CommandResult } from '../../schemas/api.ts';
import type { ClosureConflict, ClosurePlan, ModulePin, PinDiff } from '../../schemas/fleet/closure.ts';
import type { AssignmentView, TemplateView } from '../../schemas/fleet/views.ts';
import type { ApiClient } from './apiClient.ts';
import { CliError } from './cliError.ts';
import { table } from './format.ts';
import { followPlanApply, PLAN_APPLY_EXIT } from './planApplyFollow.ts';

type Output = (value: unknown, human: () => string) => void;

interface DryRun {
  nodeId: string;
  template: string | null;
  pins: ModulePin[];
  ok: boolean;
  plan: ClosurePlan | null;
  planDigest: string | null;
  conflicts: ClosureConflict[];
  diff: PinDiff | null;
}

/** `nginx@1.26.1` → a pin (repeatable option). */
function collectPin(value: string, pins: ModulePin[] = []): ModulePin[] {
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) throw new CliError('VALIDATION_FAILED', `--pin ${value}: expected <module>@<version>`);
  return [...pins, { module: value.slice(0, at), version: value.slice(at + 1) }];
}

const planLines = (plan: ClosurePlan): string =>
  table(
    Object.entries(plan).map(([module, version]) => ({ module, version })),
    ['module', 'version'],
  );

function diffLines(diff: PinDiff): string {
  const lines = [
    ...diff.added.map((d) => `+ ${d.module} ${d.to}`),
    ...diff.removed.map((d) => `- ${d.module} ${d.from}`),
    ...diff.changed.map((d) => `~ ${d.module} ${d.from} → ${d.to}`),
  ];
  return lines.length > 0 ? lines.join('\n') : '(no change)';
}

function dryRunText(run: DryRun): string {
  if (!run.ok) return `${run.nodeId}: no plan (CLOSURE_CONFLICT)\n${run.conflicts.map((c) => `  ${c.code} ${JSON.stringify(c)}`).join('\n')}`;
  return `${run.nodeId}: template ${run.template ?? '(none)'}, plan ${run.planDigest}\n${planLines(run.plan!)}\n${diffLines(run.diff!)}`;
}

/** `templates define|ls|show` (fleet.defineTemplate) and `assignments set|pin|unpin|apply|show` (docs/modules.md). */
export function addFleetCommands(program: Command, api: () => ApiClient, print: Output): void {
  const templates = program.command('templates').description('templates: the modules and capabilities a host runs, with the templates they include');
  templates
    .command('define <file>')
    .description('define or replace a template from a JSON file { templateId, requires, includes } (fleet.defineTemplate)')
    .action(async (file: string) => {
      let body: unknown;
      try {
        body = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new CliError('VALIDATION_FAILED', `${file}: ${(err as Error).message}`);
      }
      const result = await api().command<CommandResult>('fleet.defineTemplate', body);
      const id = (body as { templateId?: string }).templateId;
      print(result, () => (result.events.length > 0 ? `defined template ${id}` : `template ${id} unchanged`));
    });
  templates
    .command('ls')
    .description('templates, with their requirements and includes')
    .action(async () => {
      const page = await api().get<{ items: TemplateView[] }>('/v1/fleet/templates');
      const rows = page.items.map((t) => ({
        ...t,
        requires: t.requires.map((r) => `${r.module ?? `capability:${r.capability}`} ${r.range}`).join(', '),
        includes: t.includes.join(','),
      }));
      print(page, () => table(rows, ['templateId', 'requires', 'includes', 'definedAt']));
    });
  templates
    .command('show <template>')
    .description('one template and how many hosts are assigned it')
    .action(async (id: string) => {
      const t = await api().get<TemplateView & { hostCount: number }>(`/v1/fleet/templates/${encodeURIComponent(id)}`);
      const rows = t.requires.map((r) => ({ requires: r.module ?? `capability:${r.capability}`, range: r.range }));
      print(t, () => `${t.templateId}: includes ${t.includes.join(', ') || '(none)'}; ${t.hostCount} host(s)\n${table(rows, ['requires', 'range'])}`);
    });

  const assignments = program.command('assignments').description("assignments: each host's template, pins and the plan they resolve to");
  assignments
    .command('set <node>')
    .description("assign a template (and, with --pin, replace the host's pins): fleet.assignTemplate, or its dry run")
    .requiredOption('--template <template>', 'the template the host runs')
    .option('--pin <module@version>', 'an exact version on top of the template (repeatable)', collectPin)
    .option('--dry-run', 'show the plan and what it would change; assign nothing')
    .action(async (nodeId: string, o: { template: string; pin?: ModulePin[]; dryRun?: boolean }) => {
      const body = { template: o.template, ...(o.pin ? { pins: o.pin } : {}) };
      if (o.dryRun) {
        const run = await api().call<DryRun>('POST', `/v1/fleet/assignments/${encodeURIComponent(nodeId)}/dry-run`, body);
        print(run, () => dryRunText(run));
        return;
      }
      await assign(api(), print, 'fleet.assignTemplate', { nodeId, ...body });
    });
  assignments
    .command('pin <node> <pin>')
    .description('pin one module of the host at a version (module@version): fleet.pinModule')
    .action(async (nodeId: string, pin: string) => assign(api(), print, 'fleet.pinModule', { nodeId, ...collectPin(pin)[0]! }));
  assignments
    .command('unpin <node> <module>')
    .description("let the host's template decide the module again: fleet.unpinModule")
    .action(async (nodeId: string, module: string) => assign(api(), print, 'fleet.unpinModule', { nodeId, module }));
  assignments
    .command('apply <node>')
    .description("install the host's pinned plan now, each module it does not already report at that version: fleet.applyPlan")
    .option('--follow', 'wait until the host reports every module of the plan; exit 0 all active and healthy, 3 not')
    .action(async (nodeId: string, o: { follow?: boolean }) => {
      const result = await api().command<CommandResult>('fleet.applyPlan', { nodeId });
      const event = result.events.find((e) => e.type === 'HostPlanApplyRequested')?.data as { plan: ClosurePlan; planDigest: string };
      if (!o.follow) {
        print(result, () => `${nodeId}: applying plan ${event.planDigest}\n${planLines(event.plan)}`);
        return;
      }
      console.log(`${new Date().toISOString()} ${nodeId}: applying plan ${event.planDigest}`);
      const applied = await followPlanApply(api(), nodeId, event.plan, (line) => console.log(line));
      const rows = applied.modules.map((m) => ({ module: m.name, version: m.version, state: m.state }));
      print(applied, () => table(rows, ['module', 'version', 'state']));
      process.exitCode = applied.healthy ? PLAN_APPLY_EXIT.healthy : PLAN_APPLY_EXIT.unhealthy;
    });
  assignments
    .command('show <node>')
    .description("the host's template, pins and plan")
    .action(async (nodeId: string) => {
      const a = await api().get<AssignmentView>(`/v1/fleet/assignments/${encodeURIComponent(nodeId)}`);
      const pins = a.pins.map((p) => `${p.module}@${p.version}`).join(', ') || '(none)';
      print(a, () => `${a.nodeId}: template ${a.template ?? '(none)'}, pins ${pins}, plan ${a.planDigest}\n${planLines(a.plan)}`);
    });
}

async function assign(api: ApiClient, print: Output, name: string, body: { nodeId: string } & Record<string, unknown>): Promise<void> {
  const result = await api.command<CommandResult>(name, body);
  const event = result.events.find((e) => e.type === 'HostPlanAssigned')?.data as { plan: ClosurePlan; planDigest: string } | undefined;
  print(result, () => (event ? `${body.nodeId}: plan ${event.planDigest}\n${planLines(event.plan)}` : `${body.nodeId}: plan unchanged`));
}
