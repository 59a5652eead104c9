import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { DecisionHistoryEntry, DecisionView, PolicyView } from '../../schemas/autonomy/views.ts';
import { decisionApprovalText } from '../../schemas/trust/approvalText.ts';
import type { ApiClient } from './apiClient.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;

const row = (d: DecisionView) => ({ ...d, signal: d.signal.kind, expires: d.expiresAt ?? '', plan: d.plan.action });

/** `autonomy ls|show|approve|reject|policies|pause|halt`: the fleet's decisions and the operators' rails. */
export function addAutonomyCommands(program: Command, api: () => ApiClient, print: Output): void {
  const autonomy = program.command('autonomy').description('sensors, decisions and approvals of fleet autonomy');
  autonomy
    .command('ls')
    .description('decisions, most recently changed first (--pending: approval requests, soonest expiry first)')
    .option('--pending', 'only requests waiting for approval')
    .option('--status <status>', 'pending, approved, running, notified, blocked or closed')
    .option('--category <category>', 'only this category')
    .option('--limit <n>', 'at most this many', '100')
    .action(async (o: { pending?: boolean; status?: string; category?: string; limit: string }) => {
      const status = o.pending ? 'pending' : o.status;
      const q = new URLSearchParams({ limit: o.limit, ...(status ? { status } : {}), ...(o.category ? { category: o.category } : {}) });
      const page = await api().get<{ items: DecisionView[] }>(`/v1/autonomy/decisions?${q.toString()}`);
      print(page, () => table(page.items.map(row), ['decisionId', 'category', 'key', 'episode', 'status', 'disposition', 'signal', 'plan', 'expires']));
    });
  autonomy
    .command('show <decisionId>')
    .description('one decision: signal, policy, plan and digest, approvals, remediation, outcome and history')
    .action(async (decisionId: string) => {
      const d = await api().get<DecisionView & { history: DecisionHistoryEntry[] }>(`/v1/autonomy/decisions/${encodeURIComponent(decisionId)}`);
      print(d, () =>
        [
          `${d.decisionId}  ${d.category} / ${d.key}  episode ${d.episode}  ${d.status} (${d.disposition}${d.dispositionReason ? `: ${d.dispositionReason}` : ''})`,
          `signal   ${d.signal.kind}: ${d.signal.detail}`,
          `plan     ${d.plan.action} on ${d.plan.target.type} ${d.plan.target.id} ${JSON.stringify(d.plan.params)}`,
          `digest   ${d.planDigest}`,
          ...(d.expiresAt ? [`expires  ${d.expiresAt}`] : []),
          ...(d.approvals.length ? [`approved ${d.approvals.join(', ')}`] : []),
          ...(d.lastOutcome
            ? [`outcome  ${d.lastOutcome.effective ? 'effective' : 'ineffective'} (streak ${d.ineffectiveStreak}${d.escalated ? ', escalated' : ''})`]
            : []),
          '',
          table(
            d.history.map((h) => ({ ...h, data: '' })),
            ['seq', 'episode', 'type', 'actor', 'time'],
          ),
        ].join('\n'),
      );
    });
  autonomy
    .command('approve <decisionId>')
    .description(
      'approve the pending plan (approver token; admin only without a quorum); with a quorum, sign this episode of the request with --approver and --key',
    )
    .option('--approver <id>', 'your approver id (pki.setApprovers)')
    .option('--key <file>', 'your Ed25519 private key (PEM)')
    .action(async (decisionId: string, o: { approver?: string; key?: string }) => {
      let body: Record<string, unknown> = {};
      if (o.approver || o.key) {
        if (!o.approver || !o.key) throw new Error('--approver and --key go together');
        const d = await api().get<DecisionView>(`/v1/autonomy/decisions/${encodeURIComponent(decisionId)}`);
        const signature = sign(null, Buffer.from(decisionApprovalText('approve', d)), createPrivateKey(readFileSync(o.key))).toString('base64');
        body = { signature: { approverId: o.approver, signature } };
      }
      const result = await api().call<{ events: string[] }>('POST', `/v1/autonomy/decisions/${encodeURIComponent(decisionId)}/approve`, body);
      print(result, () =>
        result.events.includes('DecisionApproved') ? `approved ${decisionId}` : `approval recorded for ${decisionId} (quorum not reached yet)`,
      );
    });
  autonomy
    .command('reject <decisionId>')
    .description('reject the pending request; the key cools down (1 h, 4 h for advancement categories)')
    .requiredOption('--reason <text>', 'why')
    .action(async (decisionId: string, o: { reason: string }) => {
      const result = await api().call('POST', `/v1/autonomy/decisions/${encodeURIComponent(decisionId)}/reject`, { reason: o.reason });
      print(result, () => `rejected ${decisionId}`);
    });
  autonomy
    .command('policies')
    .description('declared categories with the disposition in force; --set <category>=<auto|notify|require|block|default> changes one')
    .option('--set <assignment>', 'e.g. retry=auto, or retry=default to return to the declaration')
    .action(async (o: { set?: string }) => {
      let minSeq = '';
      if (o.set) {
        const [category, disposition] = o.set.split('=');
        const set = await api().command<{ seq: number }>('autonomy.setPolicy', { category, disposition: disposition === 'default' ? null : disposition });
        // The table that follows shows the change: the read model is read once it applied it.
        minSeq = `?minSeq=${set.seq}`;
      }
      const page = await api().get<{ items: PolicyView[] }>(`/v1/autonomy/policies${minSeq}`);
      print(page, () =>
        table(
          page.items.map((p) => ({ ...p, paused: p.paused ? 'paused' : '', plugin: p.pluginId ?? '' })),
          ['category', 'owner', 'disposition', 'effectiveDisposition', 'kind', 'advancement', 'paused', 'plugin'],
        ),
      );
    });
  autonomy
    .command('pause <owner>')
    .description("stop new remediations of one owner's categories (--resume to let them go on)")
    .option('--resume', 'resume instead')
    .option('--reason <text>', 'why')
    .action(async (owner: string, o: { resume?: boolean; reason?: string }) => {
      const result = await api().command('autonomy.pause', { owner, paused: !o.resume, ...(o.reason ? { reason: o.reason } : {}) });
      print(result, () => `${owner} ${o.resume ? 'resumed' : 'paused'}`);
    });
  autonomy
    .command('halt')
    .description('the kill switch: no remediation starts anywhere (--resume ends it)')
    .option('--resume', 'end the halt')
    .option('--reason <text>', 'why')
    .action(async (o: { resume?: boolean; reason?: string }) => {
      const result = await api().command('autonomy.halt', { halted: !o.resume, ...(o.reason ? { reason: o.reason } : {}) });
      print(result, () => (o.resume ? 'autonomy resumed' : 'autonomy halted'));
    });
}
