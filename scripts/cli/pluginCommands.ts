import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { PluginView, ProfileValidation } from '../../schemas/plugins/views.ts';
import type { PluginDefinition } from '../../services/plugins/definePlugin.ts';
import { runPlugin } from '../../services/plugins/runtime/runPlugin.ts';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;

/** The plugin a module exports: `default`, `plugin`, or its only export that looks like one. */
export function pluginOf(module: Record<string, unknown>, path: string): PluginDefinition {
  const isPlugin = (v: unknown): v is PluginDefinition => typeof v === 'object' && v !== null && 'id' in v && 'extensions' in v && 'version' in v;
  const candidates = [module.default, module.plugin, ...Object.values(module)].filter(isPlugin);
  if (candidates.length === 0) throw new Error(`${path} exports no plugin (definePlugin(...) as default or as "plugin")`);
  return candidates[0]!;
}

/** `plugin run <module>`, `plugins ls`, `drivers ls`, `profiles ls|validate`. */
export function addPluginCommands(program: Command, api: () => ApiClient, print: Output): void {
  program
    .command('plugin')
    .description('run a plugin as its own consumer service')
    .command('run <module>')
    .description('load a module exporting definePlugin(...) and serve its steps (BC_NATS_URL, BC_NATS_CREDS)')
    .action(async (modulePath: string) => {
      const path = resolve(modulePath);
      const plugin = pluginOf((await import(pathToFileURL(path).href)) as Record<string, unknown>, path);
      const running = await runPlugin(plugin);
      console.error(`plugin ${plugin.id} ${plugin.version} running as ${running.instanceId}`);
      const stop = () => void running.stop().finally(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });

  program
    .command('plugins')
    .description('registered plugins and their live replicas')
    .action(async () => {
      const page = await api().get<{ items: PluginView[] }>('/v1/plugins');
      const rows = page.items.map((p) => ({ ...p, steps: p.steps.map((s) => s.id).join(','), profiles: p.profiles.map((x) => x.id).join(','), replicas: p.replicas.length }));
      print(page, () => table(rows, ['pluginId', 'version', 'alive', 'replicas', 'steps', 'profiles', 'registeredAt']));
    });

  program
    .command('drivers')
    .description('drivers registered by plugins')
    .action(async () => {
      const page = await api().get<{ items: Array<Record<string, unknown>> }>('/v1/drivers');
      print(page, () => table(page.items, ['id', 'kind', 'pluginId', 'description']));
    });

  const profiles = program.command('profiles').description('workflow profiles');
  profiles
    .command('ls')
    .description('built-in and registered profiles')
    .action(async () => {
      const page = await api().get<{ items: Array<Record<string, unknown> & { steps: { id: string }[] }> }>('/v1/profiles');
      print(page, () => table(page.items.map((p) => ({ ...p, steps: p.steps.map((s) => s.id).join(' → ') })), ['id', 'version', 'role', 'pluginId', 'steps']));
    });
  profiles
    .command('validate <profile>')
    .description('a profile id, or a JSON file holding a profile; exits 1 when it has issues')
    .action(async (profile: string) => {
      const body = profile.endsWith('.json') ? { profile: JSON.parse(readFileSync(profile, 'utf8')) as unknown } : { profileId: profile };
      const result = await api().call<ProfileValidation>('POST', '/v1/profiles/validate', body);
      print(result, () => (result.ok ? `${result.profileId ?? 'profile'}: valid` : table(result.issues, ['stepIndex', 'stepId', 'code', 'message'])));
      if (!result.ok) process.exitCode = 1;
    });
}
