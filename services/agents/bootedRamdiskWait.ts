import type { StepContext } from '../../plugins/sdk/defineStep.ts';
import { RetryableError, TerminalError } from '../../plugins/sdk/stepErrors.ts';
import type { BootContestReason } from '../../schemas/trust/ramdiskBoot.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import { agentAggregate } from '../trust/agent/agent.ts';
import { joinTokenAggregate } from '../trust/joinToken/joinToken.ts';
import { ramdiskBootAggregate } from '../trust/ramdiskBoot/ramdiskBoot.ts';
import type { StreamWatch } from './streamWatch.ts';

/** The boot a ramdisk wait belongs to: the power step attempt right before it (`bootIdOf`). */
export interface RamdiskBootWait {
  bootId: string;
  /** When that power step attempt started (ms): registrations before it belong to another boot. */
  resetAtMs: number;
  /** How long the machine has from the reset to fetch its script (`BC_RAMDISK_BOOT_BUDGET_MS`). */
  budgetMs: number;
  /** Records the alarm (`pki.contestBoot`). */
  contest(reason: BootContestReason, detail: string): Promise<void>;
  /** The earlier boots of the same power step (`supersededBootIdsOf`): their ramdisks may register late, never count. */
  superseded: readonly string[];
  /** Tells of a registration with a superseded boot's token that the wait ignored (a log line). */
  ignored(join: { agentId: string; joinTokenId: string; supersededBootId: string }): void;
}

/** A registration as the join watch indexes it (`AgentJoin` of the gateway). */
interface RegisteredJoin {
  agentId: string;
  keyId: string;
  atMs: number;
  joinTokenId?: string;
  rotation: boolean;
}

type Ctx = Pick<StepContext<unknown>, 'node' | 'deadlineMs' | 'signal'>;

/** How long one look at the join watch lasts before the boot's record is read again. */
const SLICE_MS = 5_000;

/**
 * `wait.agentJoined` for a ramdisk (issue 31, findings 1 and 11): accepts only the key registered with the join token
 * minted for this boot's ticket (`RamdiskBootTokenIssued`), so the ramdisk that joins is the one that fetched this
 * reset's script. A registration with any other token after the reset, or a boot contested by the site (its script
 * fetched twice), fails closed with `BOOT_CONTESTED`. No script fetched within the boot budget of the reset is
 * `BOOT_LOST`, retryable: the workflow restarts from the boot (`rewind.ts`). A boot no token was ever issued for
 * (a site without join tokens, anonymous mode) accepts, as before, the first new ramdisk registered after the reset.
 *
 * A registration with the token of a boot this one superseded (an earlier attempt of the same power step, whose
 * machine this reset booted again: a power step retried after its reset went through, say) is stale, not a contest:
 * that ramdisk fetched its own boot's script and was reset away, its join landed late. It is told (`ignored`) and the
 * wait goes on for this boot's token, unless that earlier boot was itself contested, which fails closed as before.
 */
export async function waitForBootedRamdisk(
  deps: { repository: AggregateRepository; joins: StreamWatch<RegisteredJoin> },
  ctx: Ctx,
  boot: RamdiskBootWait,
  key: string,
): Promise<{ agentId: string; keyId: string }> {
  const { nodeId } = ctx.node;
  let quietSince = Date.now();
  /** Tokens of superseded boots already seen registering: never looked at again. */
  const stale = new Set<string>();
  const contested = (detail: string) => new TerminalError('BOOT_CONTESTED', `the ramdisk boot of ${nodeId} is contested: ${detail}`);
  for (;;) {
    const state = (await deps.repository.load(ramdiskBootAggregate, boot.bootId, 'leader')).state;
    if (state.contested) throw contested(`${state.contested.reason}: ${state.contested.detail}`);
    const now = Date.now();
    const fetchDueMs = boot.resetAtMs + boot.budgetMs;
    if (!state.issued && now > fetchDueMs) {
      throw new RetryableError('BOOT_LOST', `${nodeId} fetched no boot script within ${Math.round(boot.budgetMs / 1000)} s of its reset`, { retryAfterMs: 0 });
    }
    const left = ctx.deadlineMs - now;
    if (left <= 0) throw new RetryableError('STEP_TIMEOUT', `ramdisk agent of ${nodeId} did not join before the step timeout`, { retryAfterMs: 0 });
    const slice = Math.max(1, Math.min(left, SLICE_MS, state.issued ? SLICE_MS : fetchDueMs - now + 1));
    const join = await deps.joins.next(
      key,
      (j) => j.atMs >= boot.resetAtMs && !(j.rotation && !j.joinTokenId) && !(j.joinTokenId && stale.has(j.joinTokenId)),
      slice,
      ctx.signal,
    );
    if (!join) {
      // Long without news: the join may be stored already while the watch's consumer stalled silently.
      if (Date.now() - quietSince > 20_000) {
        deps.joins.reopen();
        quietSince = Date.now();
      }
      continue;
    }
    // Read again unless the copy read before the wait already names this token: the token may have been issued since,
    // or replaced (the site asked again for the same ticket after its first answer came too late), and the join that
    // used it stored right after. Judged on the copy, the boot's own ramdisk would contest its boot.
    const latest =
      state.issued && join.joinTokenId === state.issued.tokenId ? state : (await deps.repository.load(ramdiskBootAggregate, boot.bootId, 'leader')).state;
    if (latest.contested) throw contested(`${latest.contested.reason}: ${latest.contested.detail}`);
    const { issued } = latest;
    if (issued ? join.joinTokenId === issued.tokenId : join.joinTokenId === undefined) return { agentId: join.agentId, keyId: join.keyId };
    const earlier = join.joinTokenId ? await supersededBootOf(deps.repository, boot.superseded, join.joinTokenId) : undefined;
    let detail = `ramdisk ${join.agentId} registered for ${nodeId} with ${join.joinTokenId ? `join token ${join.joinTokenId}` : 'no join token'}, not this boot's`;
    if (earlier && !earlier.contested) {
      boot.ignored({ agentId: join.agentId, joinTokenId: join.joinTokenId!, supersededBootId: earlier.bootId });
      stale.add(join.joinTokenId!);
      // The watch keeps the latest registration per node: this boot's own, stored just before, may be hidden behind it.
      const own = issued ? await registeredWith(deps.repository, issued.tokenId) : undefined;
      if (own) return own;
      continue;
    }
    if (earlier?.contested) detail += `: the token of ${earlier.bootId}, which was contested (${earlier.contested.reason})`;
    await boot.contest('SECOND_REGISTRATION', detail);
    throw contested(detail);
  }
}

/** The superseded boot whose one token `tokenId` is (read at the leader), with its contest if any; undefined for any other token. */
async function supersededBootOf(repository: AggregateRepository, superseded: readonly string[], tokenId: string) {
  for (const bootId of superseded) {
    const state = (await repository.load(ramdiskBootAggregate, bootId, 'leader')).state;
    if (state.issued?.tokenId === tokenId) return { bootId, contested: state.contested };
  }
  return undefined;
}

/** The key registered with join token `tokenId`, when the join service spent it and the registration is stored. */
async function registeredWith(repository: AggregateRepository, tokenId: string): Promise<{ agentId: string; keyId: string } | undefined> {
  const token = (await repository.load(joinTokenAggregate, tokenId, 'leader')).state;
  if (!token.exists || !token.usedBy || !token.usedForKeyId) return undefined;
  const agent = (await repository.load(agentAggregate, token.usedBy, 'leader')).state;
  const registered = agent.exists && agent.keyId === token.usedForKeyId && agent.joinTokenIds.includes(tokenId);
  return registered ? { agentId: agent.agentId, keyId: agent.keyId } : undefined;
}

/**
 * How fresh the boot's record must be: `read` reads the log (at the leader) now; `seen` takes this process's copy when
 * the log confirmed it, or this process wrote it, within `LATEST_SEEN_MAX_AGE_MS` (1 s), and reads the log otherwise.
 */
export type BootCheckFreshness = 'read' | 'seen';

/**
 * Refuses to go on with a workflow whose ramdisk boot was contested after its wait succeeded (the machine's own fetch
 * came second, say): every later command, and every result before it counts, checks it, so the workflow fails closed.
 * Before a command is sent the check may take the record confirmed within 1 s (`seen`: the previous command's result
 * check usually read it moments ago, docs/security.md); before a result counts it reads the log (`read`). A contest
 * is never undone, so a copy that shows one is always right to refuse on.
 */
export async function requireUncontestedBoot(
  repository: Pick<AggregateRepository, 'load' | 'latestSeen'>,
  bootId: string,
  nodeId: string,
  freshness: BootCheckFreshness,
): Promise<void> {
  const { contested } = (
    freshness === 'seen' ? await repository.latestSeen(ramdiskBootAggregate, bootId, 'leader') : await repository.load(ramdiskBootAggregate, bootId, 'leader')
  ).state;
  if (contested) throw new TerminalError('BOOT_CONTESTED', `the ramdisk boot of ${nodeId} is contested: ${contested.reason}: ${contested.detail}`);
}
