import { describe, expect, it } from 'vitest';
import type { CommandResult } from '../../schemas/api.ts';
import { stepFacilities } from '../../services/workflow/stepFacilities.ts';

function recordingMint() {
  const sent: { name: string; payload: Record<string, unknown> }[] = [];
  const send = async (name: string, payload: unknown): Promise<CommandResult> => {
    sent.push({ name, payload: payload as Record<string, unknown> });
    return { events: [{ type: 'JoinTokenCreated', data: { expiresAt: '2026-01-01T01:00:00.000Z' } }] } as unknown as CommandResult;
  };
  return { sent, send };
}

describe('step facilities: join tokens', () => {
  it("mint a plugin's tokens as provisioned and the built-in steps' as issued, always for the step's own node", async () => {
    const node = { nodeId: 'n1', siteId: 'dc1' };
    const blobs = () => Promise.reject(new Error('unused'));
    const plugin = recordingMint();
    await stepFacilities(plugin.send, blobs, node, 'provisioned').pki.mintJoinToken({
      role: 'node',
      expect: { productUuid: '4c4c4544-0042-3510-8052-b4c04f4a4e31' },
    });
    const builtin = recordingMint();
    await stepFacilities(builtin.send, blobs, node).pki.mintJoinToken({ role: 'ramdisk' });
    expect(plugin.sent).toEqual([{ name: 'pki.createJoinToken', payload: expect.objectContaining({ attestor: 'provisioned', nodeId: 'n1', siteId: 'dc1' }) }]);
    expect(builtin.sent).toEqual([{ name: 'pki.createJoinToken', payload: expect.objectContaining({ attestor: 'issued', nodeId: 'n1', role: 'ramdisk' }) }]);
  });
});
