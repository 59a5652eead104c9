import { randomBytes } from 'node:crypto';

/**
 * What one deploy of the emulated-site e2e hands cloud-init: a marker SSH key and a cloud-config whose `runcmd` prints
 * a line naming the deploy and how many times root's authorized_keys holds the key (cloud-init's `ssh` module runs
 * before `runcmd`). The console shows the command's output, not the command: only a command that ran prints it.
 */
export interface DeployUserData {
  sshKey: string;
  userData: string;
  /** The runcmd's output on the serial console once cloud-init applied the seed: the key is in authorized_keys once. */
  appliedLine: RegExp;
  /** Text of the user data itself, looked for on the deployed disk (the cidata partition holds it verbatim). */
  onDisk: string;
}

export function deployUserData(nodeId: string, round: number): DeployUserData {
  const body = randomBytes(16).toString('hex');
  const tag = `bc-e2e-${nodeId}-${round}`;
  return {
    sshKey: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${body} ${tag}@bc`,
    userData: ['#cloud-config', 'runcmd:', `  - [sh, -c, 'echo ${tag}-keys-$(grep -c -F ${body} /root/.ssh/authorized_keys)']`, ''].join('\n'),
    appliedLine: new RegExp(`^${tag}-keys-1\\r?$`, 'm'),
    onDisk: `echo ${tag}-keys-`,
  };
}
