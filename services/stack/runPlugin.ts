import { createHash, randomUUID } from 'node:crypto';
import { PluginPing } from '../../schemas/plugins/views.ts';
import { pluginDurable, Subjects } from '../../schemas/subjects.ts';
import { sendCommand } from '../platform/commands/sendCommand.ts';
import { agentEndpointsOf, loadConfig, publicUrlOf, type Config } from '../platform/config.ts';
import { openRuntime } from './runtime.ts';
import { loadWorkflowConfig } from '../workflow/config.ts';
import { WorkflowExecutor } from '../workflow/executor.ts';
import { registrationOf, type PluginDefinition } from '../../plugins/sdk/definePlugin.ts';

export interface RunningPlugin {
  /** This replica's id (what `plugins.list` shows among the live replicas). */
  readonly instanceId: string;
  stop(): Promise<void>;
}

/**
 * Runs a plugin as its own consumer service: connects to NATS with this process's settings (`BC_NATS_URL`,
 * `BC_NATS_CREDS`), registers the plugin (refused when a step or profile id is taken), then takes the work of its
 * steps from the durable every replica shares (`plugin_<id>` on `bc.work.plugin.<id>.>`) and answers liveness pings.
 * Work left by a replica that died waits in the stream until this or another replica takes it.
 *
 * This module is the second SDK entry, `better-compute/sdk/worker` (package.json exports): the composition root of a
 * plugin's own process, kept out of the authoring API (`better-compute/sdk`), which imports no runtime internals.
 */
export async function runPlugin(plugin: PluginDefinition, options: { config?: Config; env?: NodeJS.ProcessEnv } = {}): Promise<RunningPlugin> {
  const env = options.env ?? process.env;
  const config = options.config ?? loadConfig(env);
  // A plugin decides no command of the catalog (its executor's own are `executorCommands`), so it loads none of its
  // deciders; `plugins.register`, not defined here, goes to the `commands` queue group rather than its partition.
  const { nc, store, log } = await openRuntime(config, `plugin-${plugin.id}`, []);
  const instanceId = randomUUID();
  const startedAt = new Date().toISOString();
  try {
    const registration = registrationOf(plugin);
    // Same content, same id: replicas and restarts of one version append one registration between them.
    const commandId = `reg-${createHash('sha256').update(JSON.stringify(registration)).digest('hex').slice(0, 40)}`;
    await sendCommand(nc, 'plugins.register', registration, { commandId });
    const executor = new WorkflowExecutor(nc, store, loadWorkflowConfig(env), log.child({ plugin: plugin.id, instanceId }), {
      steps: new Map(plugin.steps.map((s) => [s.id, s])),
      // What a plugin's step hands a machine (an ISO, a seed) anyone who reads it holds: its tokens must expect the machine.
      mintsAs: 'provisioned',
      work: { durable: pluginDurable(plugin.id), filterSubject: Subjects.pluginWorkFilter(plugin.id) },
      blobBaseUrl: publicUrlOf(config),
      agentEndpoints: agentEndpointsOf(config),
      natsAuth: config.natsAuth,
      // The platform's own executors take agents' results in, for every command whoever sent it.
      resultIntake: false,
    });
    await executor.start();
    const ping = PluginPing.parse({ pluginId: plugin.id, instanceId, version: plugin.version, startedAt });
    const liveness = nc.subscribe(Subjects.pluginPing(plugin.id), { callback: (_err, msg) => void msg.respond(JSON.stringify(ping)) });
    log.info({ plugin: plugin.id, version: plugin.version, instanceId, steps: registration.steps.map((s) => s.id) }, 'plugin running');
    return {
      instanceId,
      stop: async () => {
        liveness.unsubscribe();
        await executor.stop();
        await nc.drain();
      },
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
