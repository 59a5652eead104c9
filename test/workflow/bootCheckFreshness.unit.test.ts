import { describe, expect, it } from 'vitest';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { Subjects } from '../../schemas/subjects.ts';
import type { RamdiskBootState } from '../../services/trust/ramdiskBoot/ramdiskBoot.ts';
import { agent, fakeSite, gatewayOn } from '../support/fakeSiteGateway.ts';

const clean: RamdiskBootState = { issued: null, contested: null };
const contested: RamdiskBootState = { issued: null, contested: { reason: 'SECOND_FETCH', detail: 'the script was fetched again' } };

/**
 * The gateway of a step after a ramdisk boot (`bootedRamdiskBootId` set), over a site that answers every command at
 * once. The boot's record is `seen` in this process's copy (`latestSeen`, confirmed within 1 s) and `logged` on a read
 * of the log (`load`); the reads of each are counted.
 */
function gatewayAfterBoot(seen: RamdiskBootState, logged: RamdiskBootState) {
  const site = fakeSite();
  const reads = { seen: 0, logged: 0 };
  const agentState = async () => ({ state: agent });
  const isBoot = (agg: { type: string }) => agg.type === 'ramdiskBoot';
  const publish = site.deps.js.publish;
  const gateway = gatewayOn(site, {
    js: {
      publish: async (subject: string, data: string) => {
        await publish(subject, data);
        site.answer(site.published.length, { ok: true, status: 200 });
      },
    } as never,
    repository: {
      latestSeen: async (agg: { type: string }) => (isBoot(agg) ? ((reads.seen += 1), { state: seen }) : agentState()),
      load: async (agg: { type: string }) => (isBoot(agg) ? ((reads.logged += 1), { state: logged }) : agentState()),
      judged: async (_agg: unknown, _id: string, judge: (s: unknown) => unknown) => judge(await agentState()),
    } as never,
    // The accepted result of the last command sent, as the result watch would deliver it.
    results: {
      next: async () => {
        const c = site.published.at(-1)!;
        const msg = await site.deps.jsm.direct.getMessage('', {
          last_by_subj: Subjects.acceptedAgentResult(c.siteId, c.nodeId, c.commandId, c.nonce),
        });
        return msg ? { seq: 1, data: msg.data } : null;
      },
    } as never,
    bootedRamdiskBootId: 'wf-1-s1-a1',
  });
  return { gateway, site, reads };
}

describe('the boot check of commands after a ramdisk boot', () => {
  it('sends on a copy of the boot record the log confirmed within 1 s, and counts the result only on a read of the log', async () => {
    const { gateway, reads } = gatewayAfterBoot(clean, clean);
    const answer = await gateway.runAgentCommand('power.get', {}, false);
    expect(answer.agentId).toBe('site-dc1');
    expect(reads).toEqual({ seen: 1, logged: 1 });
  });

  it('a contest the copy does not show yet still fails the command before its result counts', async () => {
    const { gateway, site, reads } = gatewayAfterBoot(clean, contested);
    await expect(gateway.runAgentCommand('power.get', {}, false)).rejects.toMatchObject({ code: 'BOOT_CONTESTED' });
    // Sent on the copy's word; refused on the log's.
    expect(site.published.map((c: AgentCommand) => c.commandId)).toEqual(['wf-1-s3-a1']);
    expect(reads).toEqual({ seen: 1, logged: 1 });
  });

  it('a contest the copy shows refuses before anything is sent, without a read', async () => {
    const { gateway, site, reads } = gatewayAfterBoot(contested, clean);
    await expect(gateway.runAgentCommand('power.get', {}, false)).rejects.toMatchObject({ code: 'BOOT_CONTESTED' });
    expect(site.published).toEqual([]);
    expect(reads).toEqual({ seen: 1, logged: 0 });
  });
});
