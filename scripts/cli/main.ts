import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { readAdminToken } from '../../services/auth/bootstrap.ts';
import { ApiClient, ApiError } from './apiClient.ts';
import { table } from './format.ts';
import { addMetalLifecycleCommands } from './metalCommands.ts';
import { addNodeLabelCommand } from './nodeLabelCommands.ts';
import { addNodeLogCommand } from './nodeLogCommands.ts';
import { addVpsCommands } from './vpsCommands.ts';
import { addHoldCommands } from './holdCommands.ts';
import { addWarmPoolCommands } from './warmPoolCommands.ts';
import { addPluginCommands } from './pluginCommands.ts';
import { addBrokerCommands } from './brokerCommands.ts';
import { addDoctorCommand } from './doctor/doctorCommand.ts';
import { CliError } from './cliError.ts';
import { ConfigError } from '../../services/platform/configError.ts';
import { addTailCommand } from './inspect/tailCommand.ts';
import { addDeadLetterCommands } from './deadLetterCommands.ts';
import { addAutonomyCommands } from './autonomyCommands.ts';
import { addModuleCommands } from './moduleCommands.ts';
import { addFleetCommands } from './fleetCommands.ts';
import { addRolloutCommands } from './rolloutCommands.ts';
import { describeSteps, followWorkflow } from './workflowProgress.ts';
import type { WorkflowView } from '../../schemas/metal/workflowViews.ts';

const program = new Command('better-compute')
  .description('Better Compute control plane CLI (talks to the HTTP API; doctor and broker run on the control-plane host)')
  .addOption(new Option('--api <url>', 'API base URL').env('BC_API_URL').default('http://127.0.0.1:8080'))
  .addOption(new Option('--token <token>', 'API bearer token (default: <BC_DATA_DIR>/admin.token, the bootstrap admin token)').env('BC_API_TOKEN'))
  .option('--json', 'print raw JSON');

const api = () => {
  const o = program.opts<{ api: string; token?: string }>();
  return new ApiClient(o.api, o.token || readAdminToken(process.env.BC_DATA_DIR ?? './.data'));
};
const print = (value: unknown, human: () => string) => console.log(program.opts<{ json?: boolean }>().json ? JSON.stringify(value, null, 2) : human());

const nodes = program.command('nodes').description('bare-metal nodes');
nodes
  .command('ls')
  .description('list nodes')
  .option('--site <siteId>')
  .option('--state <state>')
  .option('--label <term>', 'key=value or key (repeat to AND them)', (term: string, terms: string[]) => [...terms, term], [] as string[])
  .option('--limit <n>', 'page size', '100')
  .action(async (o: { site?: string; state?: string; label: string[]; limit: string }) => {
    const q = new URLSearchParams({ limit: o.limit, ...(o.site ? { siteId: o.site } : {}), ...(o.state ? { state: o.state } : {}) });
    for (const term of o.label) q.append('label', term);
    const page = await api().get<{ items: Array<Record<string, unknown>>; nextCursor: string | null }>(`/v1/nodes?${q.toString()}`);
    print(
      page,
      () =>
        table(page.items, ['nodeId', 'siteId', 'state', 'connected', 'maintenance', 'hardwareProfile', 'bmcAddress']) +
        (page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : ''),
    );
  });
nodes
  .command('show <nodeId>')
  .description('one node, with its workflow history')
  .action(async (nodeId: string) => {
    const node = await api().get<Record<string, unknown>>(`/v1/nodes/${encodeURIComponent(nodeId)}`);
    const history = await api().get<{ items: WorkflowView[] }>(`/v1/nodes/${encodeURIComponent(nodeId)}/workflows`);
    print({ ...node, workflows: history.items }, () =>
      [
        ...Object.entries(node).map(([k, v]) => `${k.padEnd(20)} ${v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v)}`),
        'workflows:',
        table(history.items, ['workflowId', 'operation', 'state', 'startedAt', 'endedAt', 'failedStep']),
      ].join('\n'),
    );
  });

addNodeLabelCommand(nodes, api, print);
addNodeLogCommand(nodes, api, print, () => program.opts<{ json?: boolean }>().json === true);

program
  .command('sites')
  .description('list sites')
  .action(async () => {
    const sites = await api().get<{ items: Array<Record<string, unknown>> }>('/v1/sites');
    print(sites, () => table(sites.items, ['siteId', 'name', 'nodeCount', 'provisioningCidrs']));
  });

const metal = program.command('metal').description('bare-metal lifecycle commands');
metal
  .command('enroll')
  .description('enroll a machine at a site')
  .requiredOption('--site <siteId>')
  .requiredOption('--bmc <url>', 'BMC Redfish address: the BMC, or one of its systems (https://10.0.0.5/redfish/v1/Systems/2)')
  .requiredOption('--credentials <ref>', 'secret reference for the BMC credentials, e.g. secret:r1-n1-bmc')
  .requiredOption('--profile <name>', 'hardware profile')
  .requiredOption('--mac <mac...>', 'MAC addresses')
  .option('--node <nodeId>')
  .addOption(new Option('--bmc-auth <mode>', 'how the site agent logs in (default auto: a session, else Basic)').choices(['auto', 'session', 'basic']))
  .addOption(new Option('--bmc-ca <file>', "PEM CA bundle the BMC's certificate must chain to").conflicts(['bmcPin', 'bmcInsecure']))
  .addOption(new Option('--bmc-pin <sha256>', "base64 SHA-256 of the BMC certificate's SubjectPublicKeyInfo").conflicts(['bmcInsecure']))
  .option('--bmc-insecure', 'do not verify the BMC certificate (lab only; warned at every use)')
  .addOption(new Option('--boot-mode <mode>', 'boot mode for boot overrides (default UEFI; Legacy on AMI boards)').choices(['UEFI', 'Legacy']))
  .option('--inspect-in-band', 'the first inspection boots the ramdisk and compares what it sees with the BMC')
  .option('--idempotency-key <key>')
  .action(
    async (o: {
      site: string;
      bmc: string;
      credentials: string;
      profile: string;
      mac: string[];
      node?: string;
      bmcAuth?: string;
      bmcCa?: string;
      bmcPin?: string;
      bmcInsecure?: boolean;
      bootMode?: string;
      inspectInBand?: boolean;
      idempotencyKey?: string;
    }) => {
      const tls = o.bmcCa
        ? { mode: 'ca', caBundle: readFileSync(o.bmcCa, 'utf8') }
        : o.bmcPin
          ? { mode: 'pin', spkiSha256: o.bmcPin }
          : o.bmcInsecure
            ? { mode: 'insecure' }
            : undefined;
      const bmc = {
        address: o.bmc,
        credentialsRef: o.credentials,
        ...(o.bmcAuth ? { auth: o.bmcAuth } : {}),
        ...(tls ? { tls } : {}),
        ...(o.bootMode ? { bootMode: o.bootMode } : {}),
      };
      const body = { nodeId: o.node, siteId: o.site, bmc, hardwareProfile: o.profile, macs: o.mac, ...(o.inspectInBand ? { inspectInBand: true } : {}) };
      const result = await api().command<{ aggregate: { id: string }; seq: number }>('metal.enroll', body, o.idempotencyKey);
      print(result, () => `enrolled ${result.aggregate.id} (seq ${result.seq})`);
    },
  );

addMetalLifecycleCommands(metal, api, print);

const vps = program.command('vps').description('VPS tenants, quota, pools, warm slots, flavors, accounts and instances');
addVpsCommands(vps, api, print);
addWarmPoolCommands(vps, api, print);
addHoldCommands(program.command('holds').description('hold reservations: capacity on nodes kept for a tenant or pool until it expires'), api, print);
addPluginCommands(program, api, print);
addBrokerCommands(program, print);
addTailCommand(program);
addDoctorCommand(program);
addDeadLetterCommands(program, api, print);
addAutonomyCommands(program, api, print);
addModuleCommands(program, api, print);
addFleetCommands(program, api, print);
addRolloutCommands(program, api, print);

const workflows = program.command('workflows').description('workflows');
workflows
  .command('show <workflowId>')
  .description('a workflow and its steps')
  .option('--follow', 'follow it with a progress display until it ends')
  .action(async (workflowId: string, o: { follow?: boolean }) => {
    const view = o.follow ? await followWorkflow(api(), workflowId) : await api().get<WorkflowView>(`/v1/workflows/${encodeURIComponent(workflowId)}`);
    print(view, () => `${view.workflowId} ${view.operation} on ${view.nodeId}: ${view.state}${view.error ? ` (${view.error})` : ''}\n${describeSteps(view)}`);
  });

program
  .command('command <name> [json]')
  .description('send any command; the body is JSON (or @file.json, or - for stdin)')
  .option('--idempotency-key <key>')
  .action(async (name: string, json: string | undefined, o: { idempotencyKey?: string }) => {
    const text = json === undefined || json === '-' ? readFileSync(0, 'utf8') : json.startsWith('@') ? readFileSync(json.slice(1), 'utf8') : json;
    const result = await api().command<{ seq: number; duplicate: boolean; events: Array<{ type: string }> }>(name, JSON.parse(text), o.idempotencyKey);
    print(
      result,
      () => `${result.duplicate ? 'duplicate of' : 'appended at'} seq ${result.seq}: ${result.events.map((e) => e.type).join(', ') || '(no change)'}`,
    );
  });

program
  .command('events <aggregate>')
  .description('history of an aggregate, e.g. metal.node/r1-n1')
  .action(async (aggregate: string) => {
    const history = await api().get<{ items: Array<Record<string, unknown> & { metadata: Record<string, string> }> }>(
      `/v1/events?aggregate=${encodeURIComponent(aggregate)}`,
    );
    print(history, () =>
      table(
        history.items.map((e) => ({ ...e, time: e.metadata.time, actor: e.metadata.actor })),
        ['seq', 'time', 'type', 'actor'],
      ),
    );
  });

program
  .command('rebuild <readModel>')
  .description('rebuild a read model from the log (the API keeps serving the old one meanwhile)')
  .action(async (name: string) => {
    const status = await api().call<Record<string, unknown>>('POST', `/v1/admin/projections/${name}/rebuild`);
    print(status, () => `rebuilt ${name}: checkpoint ${String(status.checkpoint)}, lag ${String(status.lag)}`);
  });

try {
  await program.parseAsync();
} catch (err) {
  if (err instanceof ApiError) {
    console.error(`error ${err.code}: ${err.message}`);
    for (const issue of err.issues) console.error(`  ${issue.path}: ${issue.message}`);
    process.exit(err.status >= 500 || err.status === 0 ? 2 : 1);
  }
  if (err instanceof CliError || err instanceof ConfigError) {
    console.error(`error ${err instanceof ConfigError ? err.reason : err.code}: ${err.message}`);
    process.exit(1);
  }
  throw err;
}
