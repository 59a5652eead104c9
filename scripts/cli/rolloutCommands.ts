import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CommandResult } from '../../schemas/api.ts';
import { rolloutApprovalText } from '../../schemas/trust/approvalText.ts';
import type { RolloutDetailView, RolloutView } from '../../schemas/fleet/rolloutViews.ts';
import type { ApiClient } from './apiClient.ts';
import { CliError } from './cliError.ts';
import { table } from './format.ts';
import { followExitCodes, followRollout } from './rolloutProgress.ts';

type Output = (value: unknown, human: () => string) => void;

interface StartOptions {
  template?: string;
  host?: string[];
  canary: string;
  wavePercent: string;
  maxFailures: string;
  waveTimeout: string;
  planDigest?: string;
  dryRun?: boolean;
  follow?: boolean;
}

const FOLLOW =
  'stream its progress (approvals, waves, hosts, status) until it ends or halts; exit 0 completed, 3 halted, 4 rolled back, 5 aborted, 6 rejected, 7 approval expired';

const collect = (value: string, all: string[] = []): string[] => [...all, value];

function integer(flag: string, value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new CliError('VALIDATION_FAILED', `${flag} ${value}: expected a whole number`);
  return Number(value);
}

const wavesText = (waves: readonly (readonly string[])[]): string =>
  waves.map((hosts, i) => `  wave ${i}${i === 0 ? ' (canary)' : ''}: ${hosts.join(', ')}`).join('\n');

function detailText(r: RolloutDetailView): string {
  const halt = r.halt ? `; last halt ${r.halt.reason} (failed: ${r.halt.failed.join(', ') || 'none'})` : '';
  const approvals =
    r.approvalsRequired > 0
      ? `\napprovals ${r.approvals.length}/${r.approvalsRequired}${r.approvals.length ? `: ${r.approvals.join(', ')}` : ''}` +
        (r.approvalExpiresAt !== null ? `; window closes ${r.approvalExpiresAt}` : '') +
        (r.rejectedBy !== null ? `; rejected by ${r.rejectedBy}` : '')
      : '';
  const head = `${r.rolloutId}: ${r.module} ${r.fromVersion} → ${r.toVersion}, ${r.status}, wave ${r.startedWaves}/${r.waveCount}${halt}\nplan ${r.planDigest}${approvals}`;
  const rows = r.waves.flatMap((w) =>
    w.hosts.map((h) => ({ wave: w.wave, host: h.host, outcome: h.outcome ?? '-', restored: h.restored ?? '-', deadline: w.deadline ?? '-' })),
  );
  return `${head}\n${table(rows, ['wave', 'host', 'outcome', 'restored', 'deadline'])}`;
}

/** `rollouts start|plan|ls|show|approve|reject|pause|resume|continue|rollback|abort`, each but ls with `--follow` (docs/modules.md). */
export function addRolloutCommands(program: Command, api: () => ApiClient, print: Output): void {
  /** Follows a rollout to its end or halt, prints it, and leaves the exit code that says where it stopped. */
  async function follow(rolloutId: string, minSeq?: number): Promise<void> {
    const view = await followRollout(api(), rolloutId, (line) => console.log(line), minSeq === undefined ? {} : { minSeq });
    print(view, () => detailText(view));
    process.exitCode = followExitCodes[view.status] ?? 0;
  }

  const rollouts = program.command('rollouts').description('rollouts: a module moved to another version, wave by wave, with a breaker');
  rollouts
    .command('start <module> <fromVersion> <toVersion>')
    .description('start a rollout of the hosts that pin the module at fromVersion (fleet.startRollout), or with --dry-run show its waves')
    .option('--template <template>', 'only the hosts assigned this template')
    .option('--host <node>', 'the hosts (repeatable; default: every host that pins the module at fromVersion)', collect)
    .option('--canary <n>', 'hosts in the canary wave', '1')
    .option('--wave-percent <p>', 'each later wave: this percentage of the hosts left after the canary', '10')
    .option('--max-failures <n>', 'failed or timed-out reports in a row that trip the breaker', '3')
    .option('--wave-timeout <ms>', 'how long a wave has to report healthy', '600000')
    .option('--plan-digest <sha256>', 'start only if the plan is this one (the digest an approver signed)')
    .option('--dry-run', 'show the waves and the plan digest; start nothing')
    .option('--follow', FOLLOW)
    .action(async (module: string, fromVersion: string, toVersion: string, o: StartOptions) => {
      const body = {
        module,
        fromVersion,
        toVersion,
        ...(o.template !== undefined ? { template: o.template } : {}),
        ...(o.host !== undefined ? { hosts: o.host } : {}),
        canarySize: integer('--canary', o.canary),
        wavePercent: integer('--wave-percent', o.wavePercent),
        maxConsecutiveFailures: integer('--max-failures', o.maxFailures),
        waveTimeoutMs: integer('--wave-timeout', o.waveTimeout),
        ...(o.planDigest !== undefined ? { planDigest: o.planDigest } : {}),
      };
      if (o.dryRun) {
        const plan = await api().call<{ hosts: string[]; waves: string[][]; planDigest: string }>('POST', '/v1/rollouts/plan', body);
        print(plan, () => `${module} ${fromVersion} → ${toVersion} on ${plan.hosts.length} host(s), plan ${plan.planDigest}\n${wavesText(plan.waves)}`);
        return;
      }
      const result = await api().call<CommandResult>('POST', '/v1/rollouts', body);
      const started = result.events.find((e) => e.type === 'RolloutStarted')?.data as
        { rolloutId: string; waves: string[][]; planDigest: string; approvalsRequired: number } | undefined;
      const awaiting = started && started.approvalsRequired > 0 ? `\nawaits ${started.approvalsRequired} approval(s) of its plan (rollouts approve)` : '';
      print(result, () =>
        started ? `started ${started.rolloutId}, plan ${started.planDigest}\n${wavesText(started.waves)}${awaiting}` : 'rollout already running with this plan',
      );
      if (!o.follow) return;
      // The same plan sent again appended nothing: the module's current rollout is the one it names.
      const rolloutId =
        started?.rolloutId ??
        (await api().get<{ items: RolloutView[] }>(`/v1/rollouts?module=${encodeURIComponent(module)}&minSeq=${result.seq}`)).items[0]?.rolloutId;
      if (rolloutId === undefined) throw new CliError('NOT_FOUND', `no rollout of ${module} to follow`);
      await follow(rolloutId, result.seq);
    });
  rollouts
    .command('ls')
    .description('rollouts, newest first')
    .option('--module <module>', 'of this module only')
    .action(async (o: { module?: string }) => {
      const page = await api().get<{ items: RolloutView[] }>(`/v1/rollouts${o.module ? `?module=${encodeURIComponent(o.module)}` : ''}`);
      const rows = page.items.map((r) => ({ ...r, versions: `${r.fromVersion} → ${r.toVersion}`, waves: `${r.startedWaves}/${r.waveCount}` }));
      print(page, () => table(rows, ['rolloutId', 'module', 'versions', 'status', 'waves', 'hostCount', 'startedAt']));
    });
  rollouts
    .command('show <rollout>')
    .description("one rollout: its waves and each host's outcome")
    .option('--follow', FOLLOW)
    .action(async (id: string, o: { follow?: boolean }) => {
      if (o.follow) return follow(id);
      const rollout = await api().get<RolloutDetailView>(`/v1/rollouts/${encodeURIComponent(id)}`);
      print(rollout, () => detailText(rollout));
    });
  rollouts
    .command('approve <rollout>')
    .description('approve a rollout awaiting approval (approver token): sign its rollout id and plan digest with your approver key')
    .requiredOption('--approver <id>', 'your approver id (pki.setApprovers)')
    .requiredOption('--key <file>', 'your Ed25519 private key (PEM)')
    .option('--plan-digest <sha256>', 'the digest you reviewed (default: the one the rollout shows); another one is refused')
    .option('--follow', FOLLOW)
    .action(async (id: string, o: { approver: string; key: string; planDigest?: string; follow?: boolean }) => {
      const rollout = await api().get<RolloutDetailView>(`/v1/rollouts/${encodeURIComponent(id)}`);
      const planDigest = o.planDigest ?? rollout.planDigest;
      const signature = sign(null, Buffer.from(rolloutApprovalText('approve', { rolloutId: id, planDigest })), createPrivateKey(readFileSync(o.key))).toString(
        'base64',
      );
      const result = await api().call<CommandResult>('POST', `/v1/rollouts/${encodeURIComponent(id)}/approve`, {
        planDigest,
        approverId: o.approver,
        signature,
      });
      const types = result.events.map((e) => e.type);
      print(result, () =>
        types.includes('RolloutApproved')
          ? `${id}: approved (plan ${planDigest}); its canary starts`
          : types.length > 0
            ? `${id}: approval recorded (plan ${planDigest}); ${rollout.approvalsRequired - rollout.approvals.length - 1} more to go`
            : `${id}: unchanged (your approval counted already)`,
      );
      if (o.follow) await follow(id, result.seq);
    });
  rollouts
    .command('reject <rollout>')
    .description('reject a rollout awaiting approval (approver token): sign its rejection with your approver key; it ends the rollout')
    .requiredOption('--approver <id>', 'your approver id (pki.setApprovers)')
    .requiredOption('--key <file>', 'your Ed25519 private key (PEM)')
    .option('--plan-digest <sha256>', 'the digest you reviewed (default: the one the rollout shows); another one is refused')
    .action(async (id: string, o: { approver: string; key: string; planDigest?: string }) => {
      const rollout = await api().get<RolloutDetailView>(`/v1/rollouts/${encodeURIComponent(id)}`);
      const planDigest = o.planDigest ?? rollout.planDigest;
      const text = Buffer.from(rolloutApprovalText('reject', { rolloutId: id, planDigest }));
      const signature = sign(null, text, createPrivateKey(readFileSync(o.key))).toString('base64');
      const result = await api().call<CommandResult>('POST', `/v1/rollouts/${encodeURIComponent(id)}/reject`, {
        planDigest,
        approverId: o.approver,
        signature,
      });
      print(result, () =>
        result.events.length > 0 ? `${id}: rejected (plan ${planDigest}); no host is touched` : `${id}: unchanged (you rejected it already)`,
      );
    });
  const verbs = {
    pause: 'stop starting waves (reports of the wave in flight still count)',
    resume: 'start waves again',
    continue: 'after a halt: accept the failed hosts and go on',
    rollback: 'after a halt (or paused): put the hosts that took the new version back on the old one',
    abort: 'stop the rollout where it is (or withdraw one awaiting approval); hosts keep what they run',
  } as const;
  for (const [verb, description] of Object.entries(verbs)) {
    rollouts
      .command(`${verb} <rollout>`)
      .description(description)
      .option('--follow', FOLLOW)
      .action(async (id: string, o: { follow?: boolean }) => {
        const result = await api().call<CommandResult>('POST', `/v1/rollouts/${encodeURIComponent(id)}/${verb}`, {});
        print(result, () => (result.events.length > 0 ? `${id}: ${result.events.map((e) => e.type).join(', ')}` : `${id}: unchanged`));
        if (o.follow) await follow(id, result.seq);
      });
  }
}
