import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { PluginView, ProfileValidation } from '../../schemas/plugins/views.ts';
import { loadPluginModules } from '../../services/plugins/pluginModules.ts';
import { runPlugin } from '../../services/stack/runPlugin.ts';
import { loadOrCreateBrokerMaterial } from '../../services/trust/broker/brokerMaterial.ts';
import { SERVICE_TTL_SECONDS } from '../../services/trust/broker/stackBroker.ts';
import { issueServiceCredentials } from '../../services/trust/broker/userCredentials.ts';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;

/** `plugin run <module>`, `plugins ls`, `drivers ls`, `profiles ls|validate`. */
export function addPluginCommands(program: Command, api: () => ApiClient, print: Output): void {
  const pluginCommand = program.command('plugin').description('run a plugin as its own consumer service');
  pluginCommand
    .command('creds <pluginId>')
    .description('issue NATS credentials for a plugin process (on the control-plane host: reads the broker material)')
    .requiredOption('--out <file>', 'where to write the .creds file (mode 0600); point the plugin at it with BC_NATS_CREDS')
    .option('--broker-dir <dir>', 'broker material (default: BC_BROKER_DIR, else <BC_DATA_DIR>/broker)')
    .action(async (pluginId: string, o: { out: string; brokerDir?: string }) => {
      const dir = o.brokerDir ?? process.env.BC_BROKER_DIR ?? join(process.env.BC_DATA_DIR ?? './.data', 'broker');
      const issued = await issueServiceCredentials(await loadOrCreateBrokerMaterial(dir), `plugin-${pluginId}`, { ttlSeconds: SERVICE_TTL_SECONDS });
      writeFileSync(o.out, issued.creds, { mode: 0o600 });
      print(
        { pluginId, expiresAt: issued.expiresAt, file: o.out },
        () => `credentials for plugin ${pluginId} written to ${o.out} (expire ${issued.expiresAt})`,
      );
    });
  pluginCommand
    .command('run <module>')
    .description('load a module exporting definePlugin(...) and serve its steps (BC_NATS_URL, BC_NATS_CREDS)')
    .action(async (modulePath: string) => {
      const plugin = (await loadPluginModules([modulePath]))[0]!;
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
      const rows = page.items.map((p) => ({
        ...p,
        steps: p.steps.map((s) => s.id).join(','),
        profiles: p.profiles.map((x) => x.id).join(','),
        replicas: p.replicas.length,
      }));
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
      print(page, () =>
        table(
          page.items.map((p) => ({ ...p, steps: p.steps.map((s) => s.id).join(' → ') })),
          ['id', 'version', 'role', 'pluginId', 'steps'],
        ),
      );
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
