import { describe, expect, test } from 'vitest';
import { BrokerTrustError } from '../../services/trust/broker/errors.ts';
import { inboxPrefixFor, permissionsFor } from '../../services/trust/broker/permissions.ts';

describe('permissionsFor', () => {
  test('control-plane credentials publish anywhere and carry no response permission, whose tracking the server pays per delivery', () => {
    const p = permissionsFor({ role: 'control-plane' });
    expect(p.pub.allow).toEqual(['>']);
    expect(p).not.toHaveProperty('resp');
    expect(p.sub.allow).toEqual(['bc.>', '_INBOX.>', '$JS.EVENT.>']);
  });

  test('a site agent may pull, ack and read only through its own durable, publish only its own results and register only itself', () => {
    const user = 'UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4';
    const p = permissionsFor({ role: 'site', agentId: 'site-dc1', siteId: 'dc1' }, user);
    expect(p.pub.allow.sort()).toEqual(
      [
        '$JS.API.CONSUMER.MSG.NEXT.BC_AGENT_COMMANDS.site_dc1',
        '$JS.API.CONSUMER.INFO.BC_AGENT_COMMANDS.site_dc1',
        '$JS.ACK.BC_AGENT_COMMANDS.site_dc1.>',
        'bc.site.dc1.res.>',
        '$JS.API.DIRECT.GET.BC_AGENT_RESULTS.bc.site.dc1.accepted.>',
        `bc.trust.register.site-dc1.${user}`,
        `bc.trust.keyStatus.site-dc1.${user}`,
        'bc.secrets.grant',
        'bc.trust.bootToken',
        'bc.site.dc1.log.*.site-agent',
        'bc.site.dc1.log.*.serial',
      ].sort(),
    );
    expect(p.sub.allow).toEqual(['_INBOX_site-dc1.>', 'bc.site.dc1.node.*.cmd']);
    expect(p).not.toHaveProperty('resp');
    // No agent sends commands, on the queue subjects or the partitions: `agent.register` is not a bc.cmd command any more.
    expect(p.pub.allow.some((s) => s.startsWith('bc.cmd'))).toBe(false);
  });

  test('a node agent is confined to its node', () => {
    const p = permissionsFor({ role: 'node', agentId: 'rd-n1', siteId: 'dc1', nodeId: 'n1' });
    expect(p.pub.allow).toContain('$JS.API.CONSUMER.MSG.NEXT.BC_AGENT_COMMANDS.ramdisk_rd-n1');
    expect(p.pub.allow).toContain('bc.site.dc1.res.n1.>');
    // It reads back what the result intake stored for its node, and may store nothing there itself.
    expect(p.pub.allow).toContain('$JS.API.DIRECT.GET.BC_AGENT_RESULTS.bc.site.dc1.accepted.n1.>');
    expect(p.pub.allow.filter((s) => s.includes('.accepted.') && !s.startsWith('$JS.API.DIRECT.GET.'))).toEqual([]);
    // Heartbeats while a command runs, on its own node's subject and nowhere else.
    expect(p.pub.allow.filter((s) => s.includes('.hb.'))).toEqual(['bc.site.dc1.hb.n1']);
    expect(p.pub.allow.some((s) => s.includes('CREATE') || s === '$JS.API.>' || s === 'bc.>')).toBe(false);
    expect(p.sub.allow).toEqual(['_INBOX_rd-n1.>']);
    expect(p.pub.allow).not.toContain('bc.secrets.grant');
    expect(p.pub.allow).not.toContain('bc.trust.bootToken');
  });

  test('an agent may ask only for its own key status (a pending rotation), on the subject of its own user key', () => {
    const user = 'UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4';
    const p = permissionsFor({ role: 'node', agentId: 'node-n1', siteId: 'dc1', nodeId: 'n1' }, user);
    expect(p.pub.allow.filter((s) => s.startsWith('bc.trust.keyStatus.'))).toEqual([`bc.trust.keyStatus.node-n1.${user}`]);
    expect(p.pub.allow.some((s) => s.includes('*') && s.startsWith('bc.trust.'))).toBe(false);
    expect(p.sub.allow.some((s) => s.startsWith('bc.trust.'))).toBe(false);
  });

  test('an agent inside a machine prints log lines only for its own node, under its own kind', () => {
    const logsOf = (agentId: string) => permissionsFor({ role: 'node', agentId, siteId: 'dc1', nodeId: 'n1' }).pub.allow.filter((s) => s.includes('.log.'));
    expect(logsOf('ramdisk-n1-abcdefgh')).toEqual(['bc.site.dc1.log.n1.ramdisk']);
    // A tenant's installed host cannot print as the ramdisk that wiped its disk.
    expect(logsOf('node-n1')).toEqual(['bc.site.dc1.log.n1.node-agent']);
    // An agent id of no known kind prints nothing.
    expect(logsOf('rd-n1')).toEqual([]);
  });

  test('a joiner publishes only join requests and reads only the join inbox', () => {
    expect(permissionsFor({ role: 'join' })).toEqual({ pub: { allow: ['bc.join.>'], deny: [] }, sub: { allow: ['_INBOX_join.>'], deny: [] } });
    expect(inboxPrefixFor({ role: 'join' })).toBe('_INBOX_join');
  });

  test('an inspector reads bc.> but not join requests (bearer tokens), and publishes nothing, not even requests', () => {
    expect(permissionsFor({ role: 'inspector' })).toEqual({ pub: { allow: [], deny: ['>'] }, sub: { allow: ['bc.>'], deny: ['bc.join.>'] } });
    expect(inboxPrefixFor({ role: 'inspector' })).toBe('_INBOX_inspector');
  });

  test('a grant whose ids are not single subject tokens is refused', () => {
    for (const siteId of ['dc1.>', '*', 'DC1', '']) {
      expect(() => permissionsFor({ role: 'site', agentId: 'a', siteId })).toThrow(BrokerTrustError);
    }
    expect(() => permissionsFor({ role: 'node', agentId: 'a b', siteId: 'dc1', nodeId: 'n1' })).toThrow(
      expect.objectContaining({ reason: 'INVALID_GRANT', code: 'VALIDATION_FAILED' }),
    );
  });
});
