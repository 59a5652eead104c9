import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ApiClient } from './apiClient.ts';
import { describeSteps, followWorkflow } from './workflowProgress.ts';

type Output = (value: unknown, human: () => string) => void;
type OperationResult = { seq: number; events: Array<{ type: string; data: { workflowId?: string } }> };

/** `metal deploy|release|rescue|unrescue|retry|retire|inspect|remediate|cancel|maintenance`: lifecycle verbs, optionally following the workflow. */
export function addMetalLifecycleCommands(metal: Command, api: () => ApiClient, print: Output): void {
  const run = async (name: string, body: unknown, wait: boolean) => {
    const result = await api().command<OperationResult>(name, body);
    const workflowId = result.events.find((e) => e.data.workflowId)?.data.workflowId;
    if (!wait || !workflowId) return print(result, () => `${name} accepted (seq ${result.seq})${workflowId ? `, workflow ${workflowId}` : ''}`);
    const view = await followWorkflow(api(), workflowId);
    print(view, () => `${view.operation} ${view.state}${view.error ? `: ${view.error}` : ''}\n${describeSteps(view)}`);
    if (view.state === 'failed' || view.state === 'cancelled') process.exitCode = 1;
  };

  metal
    .command('deploy <nodeId>')
    .description('deploy an image to a ready node')
    .option('--image <url>', 'image URL (the built-in deploy profile)')
    .option('--sha256 <hex>', 'image sha256 (the built-in deploy profile)')
    .option('--profile <id>', 'a registered deploy profile instead of the built-in image write')
    .option('--input <key=value...>', "inputs the profile's steps take (fromInput); a key given twice is a list")
    .option('--role <role>', 'role of the deployed host', 'host')
    .option('--ssh-key <key...>', 'SSH public keys')
    .option('--user-data <file>', 'user data file')
    .option('--wait', 'follow the workflow until it ends')
    .action(
      async (
        nodeId: string,
        o: { image?: string; sha256?: string; profile?: string; input?: string[]; role: string; sshKey?: string[]; userData?: string; wait?: boolean },
      ) => {
        const inputs = o.input ? inputsOf(o.input) : undefined;
        const body = {
          nodeId,
          ...(o.image ? { imageUrl: o.image } : {}),
          ...(o.sha256 ? { imageSha256: o.sha256 } : {}),
          ...(o.profile ? { profile: o.profile } : {}),
          ...(inputs ? { inputs } : {}),
          role: o.role,
          ...(o.sshKey ? { sshKeys: o.sshKey } : {}),
          ...(o.userData ? { userData: readFileSync(o.userData, 'utf8') } : {}),
        };
        await run('metal.deploy', body, o.wait === true);
      },
    );
  for (const [verb, command, description] of [
    ['release', 'metal.undeploy', 'release a deployed node: wipe it (attested) and return it to ready'],
    ['rescue', 'metal.rescue', 'boot a node into the rescue ramdisk'],
    ['unrescue', 'metal.unrescue', 'leave rescue for the state the node was rescued from'],
    ['retry', 'metal.retry', 'retry the operation a failed node failed in'],
    ['retire', 'metal.retire', 'wipe a node (attested), power it off and take it out of the fleet for good'],
  ] as const) {
    metal
      .command(`${verb} <nodeId>`)
      .description(description)
      .option('--wait', 'follow the workflow until it ends')
      .action(async (nodeId: string, o: { wait?: boolean }) => run(command, { nodeId }, o.wait === true));
  }
  metal
    .command('inspect <nodeId>')
    .description('inspect a ready node again: boot the ramdisk, compare what it sees with the BMC (findings on `nodes show`)')
    .option('--bmc-only', "read the BMC's inventory only; the machine is not booted")
    .option('--wait', 'follow the workflow until it ends')
    .action(async (nodeId: string, o: { bmcOnly?: boolean; wait?: boolean }) => run('metal.inspect', { nodeId, inBand: o.bmcOnly !== true }, o.wait === true));
  metal
    .command('remediate <nodeId>')
    .description('run a built-in or plugin profile on a ready or deployed node, then return it to that state')
    .requiredOption('--profile <id>', 'the profile to run (e.g. bmc-check, power-cycle, or a plugin profile)')
    .option('--allow-destructive', 'allow a profile with destructive steps (refused otherwise)')
    .option('--wait', 'follow the workflow until it ends')
    .action(async (nodeId: string, o: { profile: string; allowDestructive?: boolean; wait?: boolean }) =>
      run('metal.remediate', { nodeId, profile: o.profile, allowDestructive: o.allowDestructive === true }, o.wait === true),
    );
  metal
    .command('cancel <nodeId>')
    .description('stop the running operation: a destructive step that runs finishes first, nothing new starts')
    .option('--reason <text>', 'why (recorded on the node: "cancelled: <reason>")')
    .option('--wait', 'follow the workflow until it has stopped')
    .action(async (nodeId: string, o: { reason?: string; wait?: boolean }) => {
      const result = await api().command<OperationResult>('metal.cancel', { nodeId, ...(o.reason ? { reason: o.reason } : {}) });
      const workflowId = result.events.find((e) => e.data.workflowId)?.data.workflowId;
      if (!o.wait || !workflowId) return print(result, () => (workflowId ? `cancelling workflow ${workflowId} (seq ${result.seq})` : 'already cancelling'));
      const view = await followWorkflow(api(), workflowId);
      print(view, () => `${view.operation} ${view.state}${view.error ? `: ${view.error}` : ''}\n${describeSteps(view)}`);
    });
  metal
    .command('maintenance <nodeId> <on|off>')
    .description('set or clear the maintenance flag')
    .option('--reason <text>')
    .action(async (nodeId: string, flag: string, o: { reason?: string }) =>
      run('metal.setMaintenance', { nodeId, on: flag === 'on', ...(o.reason ? { reason: o.reason } : {}) }, false),
    );
}

/** `key=value` pairs as deploy inputs; a key given more than once collects its values in a list (`biosAttributes`). */
function inputsOf(pairs: readonly string[]): Record<string, string | string[]> {
  const inputs: Record<string, string | string[]> = {};
  for (const pair of pairs) {
    const key = pair.slice(0, pair.indexOf('='));
    const value = pair.slice(pair.indexOf('=') + 1);
    const seen = inputs[key];
    inputs[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return inputs;
}
