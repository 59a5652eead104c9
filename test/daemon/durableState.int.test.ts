import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMembership, saveMembership, type AgentMembership } from '../../daemon/agent/membership.ts';
import { PowerCut, PowerCutDisk } from '../support/powerCutDisk.ts';

const before: AgentMembership = { siteId: 'dc1', nodeId: 'n1', agentId: 'node-n1', durable: 'node_node-n1' };
const after: AgentMembership = {
  ...before,
  credentials: { creds: '-----BEGIN NATS USER JWT-----\neyJ0eXAi\n------END NATS USER JWT------\n', inboxPrefix: '_INBOX_agent_node-n1' },
};

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** What an agent reads after the reboot, for one state the disk may come back in (a thrown error is a dead agent). */
function reboot(state: ReturnType<PowerCutDisk['survivors']>[number]): AgentMembership | undefined | { error: string } {
  const root = mkdtempSync(join(tmpdir(), 'bc-powercut-'));
  roots.push(root);
  PowerCutDisk.restore(state, root);
  try {
    return loadMembership(join(root, 'state'));
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Every budget of calls a membership write can be cut after, up to and including the whole write. */
function callsOfOneWrite(): number {
  const fs = new PowerCutDisk().fsAfter(Number.MAX_SAFE_INTEGER);
  saveMembership('/state', after, fs);
  return fs.calls;
}

describe('durable agent state', () => {
  it.each([
    ['the first membership', undefined],
    ['a membership replacing another', before],
  ])(
    'regression (a deployed host came back from a forced power-off with a 0-byte membership.json): %s is the old or the new one after a power cut at any point',
    (_what, previous) => {
      const calls = callsOfOneWrite();
      expect(calls).toBeGreaterThan(5);
      for (let budget = 0; budget <= calls; budget++) {
        const disk = new PowerCutDisk();
        if (previous) disk.seed('/state/membership.json', JSON.stringify(previous));
        try {
          saveMembership('/state', after, disk.fsAfter(budget));
        } catch (err) {
          if (!(err instanceof PowerCut)) throw err;
        }
        const outcomes = disk.survivors().map(reboot);
        // Once the write returned, the new membership is the only one a reboot can find.
        const allowed = budget === calls ? [after] : [previous, after];
        for (const outcome of outcomes) expect(allowed, `power cut after ${budget} of ${calls} calls`).toContainEqual(outcome);
      }
    },
  );

  it('a membership that does not parse is a PRECONDITION_FAILED naming the file, not a bare JSON error', () => {
    const disk = new PowerCutDisk();
    disk.seed('/state/membership.json', '');
    const [state] = disk.survivors();
    const root = mkdtempSync(join(tmpdir(), 'bc-powercut-'));
    roots.push(root);
    PowerCutDisk.restore(state!, root);
    expect(() => loadMembership(join(root, 'state'))).toThrow(
      expect.objectContaining({ code: 'PRECONDITION_FAILED', message: expect.stringContaining('membership.json') }),
    );
  });
});
