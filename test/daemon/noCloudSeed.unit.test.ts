import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { noCloudSeed } from '../../daemon/ramdisk/noCloudSeed.ts';

const KEY = 'ssh-ed25519 AAAAC3Nza marker@bc';
const seed = (userData: string | undefined, sshKeys: string[] = [KEY], networkConfig?: string) =>
  noCloudSeed({ instanceId: 'n1-wf1', hostname: 'n1', sshKeys, userData, networkConfig });

describe('the NoCloud seed of a deploy', () => {
  it('without user data is a #cloud-config with the keys, and meta-data names the instance and host', () => {
    const files = seed(undefined);
    expect(files['user-data'].startsWith('#cloud-config\n')).toBe(true);
    expect(parseYaml(files['user-data'])).toEqual({ ssh_authorized_keys: [KEY] });
    expect(parseYaml(files['meta-data'])).toEqual({ 'instance-id': 'n1-wf1', 'local-hostname': 'n1' });
    expect(files['network-config']).toBeUndefined();
  });

  it("adds the keys to the user's own ssh_authorized_keys once, keeping theirs", () => {
    const files = seed(`#cloud-config\nssh_authorized_keys:\n  - ssh-rsa AAAA theirs\n  - ${KEY}\nruncmd: [touch /x]\n`, [KEY, 'ssh-rsa BBBB second']);
    expect(parseYaml(files['user-data'])).toEqual({ ssh_authorized_keys: ['ssh-rsa AAAA theirs', KEY, 'ssh-rsa BBBB second'], runcmd: ['touch /x'] });
  });

  it('puts a script next to the keys in a MIME multipart, and passes any user data through when there are no keys', () => {
    const script = '#!/bin/sh\necho hi\n';
    const mime = seed(script)['user-data'];
    expect(mime).toMatch(/^Content-Type: multipart\/mixed; boundary="([^"]+)"/);
    expect(mime).toContain('Content-Type: text/cloud-config');
    expect(mime).toContain(`Content-Type: text/x-shellscript; charset="utf-8"\nMIME-Version: 1.0\n\n${script}`);
    expect(mime).toContain(KEY);
    expect(seed('Content-Type: multipart/mixed; boundary="x"\n', [])['user-data']).toBe('Content-Type: multipart/mixed; boundary="x"\n');
  });

  it('writes every key on one line of its own, however long, whichever way the user data goes', () => {
    const key = `ssh-rsa AAAAB3NzaC1yc2E${'Q'.repeat(540)} long-key@bc`;
    const cases = [
      undefined,
      '#cloud-config\nruncmd:\n  - [sh, -c, "echo a command longer than eighty columns, which stays on its line too"]\n',
      '#!/bin/sh\necho hi\n',
    ];
    for (const userData of cases) {
      const lines = noCloudSeed({ instanceId: 'i-1', hostname: 'n1', sshKeys: [key], userData })['user-data'].split('\n');
      expect(
        lines.some((line) => line.includes(key)),
        String(userData),
      ).toBe(true);
    }
    const merged = noCloudSeed({ instanceId: 'i-1', hostname: 'n1', sshKeys: [key], userData: cases[1] })['user-data'];
    expect(merged).toContain('echo a command longer than eighty columns, which stays on its line too');
  });

  it('refuses what it cannot merge or what cloud-init would not read, with INVALID_COMMAND', () => {
    for (const bad of [
      () => seed('Content-Type: multipart/mixed; boundary="x"\n'),
      () => seed('#cloud-config\n- a list\n'),
      () => seed('#cloud-config\nssh_authorized_keys: one\n'),
      () => seed('#cloud-config\nkey: [unclosed\n'),
      () => seed(undefined, ['ssh-rsa AAAA\nruncmd: [reboot]']),
      () => seed(undefined, [], 'ethernets: {}\n'),
    ])
      expect(bad).toThrow(expect.objectContaining({ code: 'INVALID_COMMAND' }));
  });

  it('keeps a network config with a version as given', () => {
    expect(seed(undefined, [], 'version: 1\nconfig: []\n')['network-config']).toBe('version: 1\nconfig: []\n');
  });
});
