import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loadOrCreateIdentity } from '../../daemon/agent/identity.ts';
import { connectJoinedAgent } from '../../daemon/agent/joinedConnection.ts';
import { bootIdOf, supersededBootIdsOf } from '../../schemas/trust/ramdiskBoot.ts';
import { startAgentWatches } from '../../services/agents/agentWatches.ts';
import { waitForBootedRamdisk, type RamdiskBootWait } from '../../services/agents/bootedRamdiskWait.ts';
import { joinKey } from '../../services/agents/agentGateway.ts';
import type { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { startJoinService } from '../../services/trust/join/joinService.ts';
import { mintJoinToken } from '../../services/trust/joinToken/mint.ts';
import { ramdiskBootAggregate } from '../../services/trust/ramdiskBoot/ramdiskBoot.ts';
import { enrollPayload } from '../metal/engineFixture.ts';
import { startBackbone } from '../support/backboneFixture.ts';

const siteId = 'rc';
const nodeId = 'rc-m001';
const workflowId = 'wf-0123456789ab';
/** The power step of the boot: its attempt n is boot `<wf>-s1-a<n>`. */
const power = (attempt: number) => ({ workflowId, stepIndex: 1, attempt });

/**
 * `wait.agentJoined` of a ramdisk against real registrations (join service, join watch, boot records on a real
 * nats-server): which registration after the reset it takes, which it ignores, and which contest the boot.
 */
async function startBootWorld() {
  const env = await startBackbone({ projectors: false });
  const joinService = startJoinService(env.nc, env.store, env.log);
  const watches = await startAgentWatches(env.nc, env.store, env.log);
  const send = (name: string, payload: unknown, commandId: string) => env.bus.execute({ name, payload, commandId, actor: 'test' });
  await send('site.create', { siteId, name: siteId }, `site-create-${siteId}`);
  await send('metal.enroll', enrollPayload(nodeId, siteId), `enroll-${nodeId}`);
  const joined: { close(): Promise<void> }[] = [];
  const ignored: { agentId: string; joinTokenId: string; supersededBootId: string }[] = [];
  return {
    env,
    ignored,
    /** A ramdisk join token for the node, recorded for boot `attempt` (as the boot token service does) unless `attempt` is undefined. */
    async token(attempt?: number, ticketId = randomBytes(32).toString('base64url')) {
      const minted = await mintJoinToken(send, { role: 'ramdisk', siteId, nodeId, ttlSeconds: 600 });
      if (attempt !== undefined) {
        const boot = { ...power(attempt), ticketId };
        await send('pki.recordBootToken', { bootId: bootIdOf(boot), boot, siteId, nodeId, tokenId: minted.tokenId }, `record-${minted.tokenId}`);
      }
      return minted;
    },
    /** A ramdisk joins with `token`: its key is registered with it. */
    async join(token: string, name: string) {
      const agent = await connectJoinedAgent({
        natsUrl: env.nats.url,
        name,
        role: 'ramdisk',
        token,
        identity: loadOrCreateIdentity(join(env.dataDir, name)),
        siteId,
        nodeId,
        log: env.log,
      });
      joined.push(agent.nc);
      return agent.agentId;
    },
    /** The wait of boot `attempt`, reset at `resetAtMs`; `onLoad` hears each of its reads. */
    wait(attempt: number, resetAtMs: number, onLoad: () => void = () => undefined) {
      const bootId = bootIdOf(power(attempt));
      const boot: RamdiskBootWait = {
        bootId,
        resetAtMs,
        budgetMs: 60_000,
        contest: async (reason, detail) => void (await send('pki.contestBoot', { bootId, workflowId, siteId, nodeId, reason, detail }, `contest-${bootId}`)),
        superseded: supersededBootIdsOf(power(attempt)),
        ignored: (join) => void ignored.push(join),
      };
      const ctx = { node: { nodeId, siteId }, deadlineMs: Date.now() + 30_000, signal: new AbortController().signal } as Parameters<
        typeof waitForBootedRamdisk
      >[1];
      const load: AggregateRepository['load'] = async (...args) => {
        const loaded = await env.bus.repository.load(...args);
        onLoad();
        return loaded;
      };
      const repository = { load } as AggregateRepository;
      return waitForBootedRamdisk({ repository, joins: watches.joins }, ctx, boot, joinKey(siteId, nodeId, 'ramdisk'));
    },
    contestOf: async (attempt: number) => (await env.bus.repository.load(ramdiskBootAggregate, bootIdOf(power(attempt)))).state.contested,
    async [Symbol.asyncDispose]() {
      for (const nc of joined) await nc.close();
      await watches.results.stop();
      await watches.joins.stop();
      await joinService.stop();
      await env[Symbol.asyncDispose]();
    },
  };
}

/**
 * The fleet bench's BOOT_CONTESTED under load (issue 34): the site's first boot token request for a ticket was
 * answered after its 5 s timeout, so the site asked again for the same ticket and the boot's token was replaced (T2
 * for T1). The wait had read the boot with T1 and judged the boot's own ramdisk, registered with T2, on that copy.
 */
describe('wait.agentJoined of a boot whose token was replaced', () => {
  it('takes the boot’s own ramdisk registered with the newer token', { timeout: 60_000 }, async () => {
    await using world = await startBootWorld();
    const ticketId = randomBytes(32).toString('base64url');
    const resetAtMs = Date.now();
    const answeredTooLate = await world.token(1, ticketId);
    let reads = 0;
    const waiting = world.wait(1, resetAtMs, () => reads++);
    while (reads === 0) await sleep(5);
    const asked = await world.token(1, ticketId);
    expect((await world.env.bus.repository.load(ramdiskBootAggregate, bootIdOf(power(1)))).state.issued?.tokenId).toBe(asked.tokenId);
    expect(answeredTooLate.tokenId).not.toBe(asked.tokenId);
    const current = await world.join(asked.token, 'ramdisk-of-boot-1');
    await expect(waiting).resolves.toMatchObject({ agentId: current });
    expect(await world.contestOf(1)).toBeNull();
  });

  it('contests the boot when the replaced token registers', { timeout: 60_000 }, async () => {
    await using world = await startBootWorld();
    const ticketId = randomBytes(32).toString('base64url');
    const resetAtMs = Date.now();
    const replaced = await world.token(1, ticketId);
    await world.token(1, ticketId);
    const waiting = world.wait(1, resetAtMs);
    await world.join(replaced.token, 'ramdisk-with-the-replaced-token');
    await expect(waiting).rejects.toMatchObject({ code: 'BOOT_CONTESTED' });
    expect(await world.contestOf(1)).toMatchObject({ reason: 'SECOND_REGISTRATION' });
  });
});

describe('wait.agentJoined of a retried ramdisk boot', () => {
  it('ignores the late registration of a superseded boot and takes the current boot’s ramdisk', { timeout: 60_000 }, async () => {
    await using world = await startBootWorld();
    const first = await world.token(1);
    const resetAtMs = Date.now();
    const second = await world.token(2);
    const waiting = world.wait(2, resetAtMs);
    const stale = await world.join(first.token, 'ramdisk-of-boot-1');
    const current = await world.join(second.token, 'ramdisk-of-boot-2');
    await expect(waiting).resolves.toMatchObject({ agentId: current });
    expect(world.ignored).toEqual([{ agentId: stale, joinTokenId: first.tokenId, supersededBootId: bootIdOf(power(1)) }]);
    expect(await world.contestOf(2)).toBeNull();
  });

  it('finds the current boot’s ramdisk when the superseded one registered after it', { timeout: 60_000 }, async () => {
    await using world = await startBootWorld();
    const first = await world.token(1);
    const resetAtMs = Date.now();
    const second = await world.token(2);
    // Both stored before the wait looks: the join watch keeps the latest of the node, the stale one.
    const current = await world.join(second.token, 'ramdisk-of-boot-2');
    await world.join(first.token, 'ramdisk-of-boot-1');
    await expect(world.wait(2, resetAtMs)).resolves.toMatchObject({ agentId: current });
    expect(await world.contestOf(2)).toBeNull();
  });

  it('contests the boot when a ramdisk registers with a token no boot of this workflow was given', { timeout: 60_000 }, async () => {
    await using world = await startBootWorld();
    await world.token(1);
    const resetAtMs = Date.now();
    await world.token(2);
    const foreign = await world.token();
    const waiting = world.wait(2, resetAtMs);
    await world.join(foreign.token, 'ramdisk-with-a-foreign-token');
    await expect(waiting).rejects.toMatchObject({ code: 'BOOT_CONTESTED' });
    expect(await world.contestOf(2)).toMatchObject({ reason: 'SECOND_REGISTRATION' });
  });

  it('contests the boot when the superseded boot whose token registers was itself contested', { timeout: 60_000 }, async () => {
    await using world = await startBootWorld();
    const first = await world.token(1);
    const bootId = bootIdOf(power(1));
    const detail = 'the boot script was fetched a second time';
    await world.env.bus.execute({
      name: 'pki.contestBoot',
      payload: { bootId, workflowId, siteId, nodeId, reason: 'SECOND_FETCH', detail },
      commandId: 'contest-fetch',
      actor: 'test',
    });
    const resetAtMs = Date.now();
    await world.token(2);
    const waiting = world.wait(2, resetAtMs);
    await world.join(first.token, 'ramdisk-of-a-contested-boot');
    await expect(waiting).rejects.toMatchObject({ code: 'BOOT_CONTESTED' });
    expect(await world.contestOf(2)).toMatchObject({ reason: 'SECOND_REGISTRATION' });
    expect(world.ignored).toEqual([]);
  });
});
