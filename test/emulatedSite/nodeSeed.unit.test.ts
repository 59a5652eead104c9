import { describe, expect, it } from 'vitest';
import { SEED_MAX_BYTES, decodeNodeSeed, encodeNodeSeed, seedPartitionOffset } from '../../schemas/agent/nodeSeed.ts';

describe('node seed', () => {
  it('writes the magic line and key=value lines, NUL-padded to 4 KiB', () => {
    const bytes = encodeNodeSeed({
      siteId: 's1',
      nodeId: 'n1',
      natsUrl: 'nats://10.9.0.1:4222',
      joinToken: 'bcj_jt-abc_d-E_f',
      joinCredsUrl: 'http://10.9.0.1:8080/join.creds',
    });
    expect(bytes.length).toBe(SEED_MAX_BYTES);
    expect(bytes.toString('utf8').replace(/\0+$/, '')).toBe(
      'bc-seed-v1\nsite=s1\nnode=n1\nnats=nats://10.9.0.1:4222\ntoken=bcj_jt-abc_d-E_f\njoincreds=http://10.9.0.1:8080/join.creds\n',
    );
  });

  it.each([
    ['a space', 'bcj x'],
    ['a shell substitution', '$(reboot)'],
    ['a newline', 'a\nsite=evil'],
  ])('refuses a value with %s', (_, token) => {
    expect(() => encodeNodeSeed({ siteId: 's1', nodeId: 'n1', natsUrl: 'nats://h:1', joinToken: token })).toThrow(
      expect.objectContaining({ code: 'SEED_INVALID' }),
    );
  });

  it('finds the 0xda partition in an MBR, and nothing in a disk without one', () => {
    const mbr = Buffer.alloc(512);
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    mbr[446 + 4] = 0x0c;
    mbr.writeUInt32LE(2048, 446 + 8);
    expect(seedPartitionOffset(mbr)).toBeUndefined();
    mbr[446 + 32 + 4] = 0xda;
    mbr.writeUInt32LE(405504, 446 + 32 + 8);
    expect(seedPartitionOffset(mbr)).toBe(405504 * 512);
    expect(seedPartitionOffset(Buffer.alloc(512))).toBeUndefined();
  });

  it('reads back what it wrote, and nothing from a zeroed (spent) or foreign partition', () => {
    const seed = { siteId: 's1', nodeId: 'n1', natsUrl: 'nats://10.9.0.1:4222,nats://10.9.0.2:4222', joinToken: 'bcj_jt-abc_d-E_f' };
    expect(decodeNodeSeed(encodeNodeSeed(seed))).toEqual(seed);
    expect(decodeNodeSeed(Buffer.alloc(SEED_MAX_BYTES))).toBeUndefined();
    expect(decodeNodeSeed(Buffer.from('bc-seed-v1\nsite=s1\nnode=n1\nnats=nats://h:1\n'))).toBeUndefined();
    expect(decodeNodeSeed(Buffer.from('bc-seed-v1\nsite=s1\nnode=n1\nnats=nats://h:1\ntoken=$(reboot)\n'))).toBeUndefined();
  });
});
