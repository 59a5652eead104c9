import { generateKeyPairSync, sign } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../../schemas/fleet/rolloutEvents.ts';
import { rolloutApprovalMessage } from '../../schemas/trust/approvals.ts';
import type { ApproversState } from '../../schemas/trust/approversState.ts';
import { approveRollout } from '../../services/fleet/rollout/approveRollout.ts';
import { startWave } from '../../services/fleet/rollout/controllerCommands.ts';
import { rolloutAggregate, type RolloutState } from '../../services/fleet/rollout/rollout.ts';
import { expireRolloutApproval, rejectRollout } from '../../services/fleet/rollout/rolloutVerdicts.ts';
import type { CommandDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { started } from './rolloutLog.ts';

const T0 = Date.parse('2026-12-02T12:00:00.000Z');
const WINDOW_MS = 60_000;
const keys = ['ap1', 'ap2', 'ap3'].map((approverId) => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { approverId, privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
});
const quorum: ApproversState = { approvers: keys.map(({ approverId, publicKey }) => ({ approverId, publicKey })), threshold: 2, approvalTtlSeconds: 60 };
const first = started(['vm1', 'vm2'], 1, {}, 2, new Date(T0 + WINDOW_MS).toISOString());
const planDigest = (first.data as { planDigest: string }).planDigest;
const signatures = new Map(
  keys.flatMap((k) =>
    (['approve', 'reject'] as const).map((v) => [
      `${v}/${k.approverId}`,
      sign(null, rolloutApprovalMessage(v, { rolloutId: 'nginx-1', planDigest }), k.privateKey).toString('base64'),
    ]),
  ),
);

/** One thing sent at `at` ms after the start: an approver's verdict (its signature over `signedAs`), the expiry, a wave. */
const step = fc.record({
  kind: fc.constantFrom('approve', 'reject', 'expire', 'wave'),
  approver: fc.integer({ min: 0, max: 2 }),
  signedAs: fc.constantFrom('approve', 'reject'),
  at: fc.integer({ min: 0, max: 2 * WINDOW_MS }),
});
const verdicts = new Set(['RolloutApproved', 'RolloutRejected', 'RolloutApprovalExpired']);

describe('rollout verdicts (property)', () => {
  it('ends in at most one verdict; a wave starts only after an approval reached in time with no rejection before it', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 24 }), (raw) => {
        const steps = [...raw].sort((a, b) => a.at - b.at);
        let state: RolloutState = rolloutAggregate.evolve(rolloutAggregate.initialState, first);
        const log: { event: RolloutEvent; at: number }[] = [];
        for (const s of steps) {
          const key = keys[s.approver]!;
          const signed = { rolloutId: 'nginx-1', planDigest, approverId: key.approverId, signature: signatures.get(`${s.signedAs}/${key.approverId}`)! };
          const [command, payload] = {
            approve: [approveRollout, signed],
            reject: [rejectRollout, signed],
            expire: [expireRolloutApproval, { rolloutId: 'nginx-1' }],
            wave: [startWave, { rolloutId: 'nginx-1', wave: 0 }],
          }[s.kind] as [CommandDefinition<string, any, RolloutState, RolloutEvent>, unknown];
          const context = { commandId: 'cmd-prop-01', actor: 'prop', now: new Date(T0 + s.at).toISOString(), dependencies: { quorum } };
          let events: readonly RolloutEvent[];
          try {
            events = command.decide(command.schema.parse(payload), state, context);
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            // Every refusal has a stable code, and a refused verdict names why.
            expect(['ILLEGAL_TRANSITION', 'APPROVAL_EXPIRED', 'APPROVAL_SIGNATURE_INVALID']).toContain(err.code);
            // A verdict signed as the other verdict is refused as such, whatever the rollout's status.
            if ((s.kind === 'approve' || s.kind === 'reject') && s.signedAs !== s.kind) expect(err.code).toBe('APPROVAL_SIGNATURE_INVALID');
            continue;
          }
          if (s.kind === 'approve' || s.kind === 'reject') expect(s.signedAs).toBe(s.kind);
          for (const event of events) {
            log.push({ event, at: s.at });
            state = rolloutAggregate.evolve(state, event);
          }
        }
        const ended = log.filter(({ event }) => verdicts.has(event.type));
        expect(ended.length).toBeLessThanOrEqual(1);
        const verdict = ended[0];
        const approved = log.filter(({ event }) => event.type === 'RolloutApprovalRecorded');
        if (verdict?.event.type === 'RolloutApproved') {
          // Two distinct approvers, both inside the window, and no rejection before.
          expect(new Set(approved.map(({ event }) => (event.data as { approverId: string }).approverId)).size).toBeGreaterThanOrEqual(2);
          expect(approved.every(({ at }) => at < WINDOW_MS)).toBe(true);
        }
        if (verdict?.event.type === 'RolloutApprovalExpired') expect(verdict.at).toBeGreaterThanOrEqual(WINDOW_MS);
        if (verdict?.event.type === 'RolloutRejected') expect(verdict.at).toBeLessThan(WINDOW_MS);
        // Nothing but the verdict's own wave after it: approvals, rejections and expiries all stop at the first verdict.
        const after = verdict === undefined ? [] : log.slice(log.indexOf(verdict) + 1);
        expect(after.every(({ event }) => event.type === 'RolloutWaveStarted')).toBe(true);
        const waves = log.filter(({ event }) => event.type === 'RolloutWaveStarted');
        expect(waves.length === 0 || verdict?.event.type === 'RolloutApproved').toBe(true);
        expect(waves.length).toBeLessThanOrEqual(1);
        const statusAfter: Record<string, string> = { RolloutApproved: 'running', RolloutRejected: 'rejected', RolloutApprovalExpired: 'approval-expired' };
        expect(state.current!.status).toBe(verdict === undefined ? 'awaiting-approval' : statusAfter[verdict.event.type]);
      }),
      { numRuns: 300 },
    );
  });
});
