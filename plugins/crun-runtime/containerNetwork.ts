import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { BcxOperationError } from '../sdk/bcx/index.ts';
import type { CrunRuntimeConfig } from './config.ts';
import { stderrOf } from './crunCli.ts';

const exec = promisify(execFile);

const toInt = (ip: string) => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

/**
 * The containers' network when the config names one: a bridge on the host holding the subnet's first address, and
 * per instance a named network namespace (`/run/netns/bc-<id>`, which crun joins) whose `eth0` is one end of a veth
 * pair, the other end on the bridge, with the instance's address and a default route through the bridge's.
 */
export function containerNetwork(network: NonNullable<CrunRuntimeConfig['network']>) {
  const [base, prefixText] = network.subnet.split('/') as [string, string];
  const prefix = Number(prefixText);
  const first = toInt(base) - (toInt(base) % 2 ** (32 - prefix));
  const gateway = toIp(first + 1);
  const last = first + 2 ** (32 - prefix) - 2;
  // Interface names are at most 15 characters: a digest of the id names both ends.
  const ends = (id: string) => {
    const digest = createHash('sha256').update(id).digest('hex').slice(0, 8);
    return { host: `bcv${digest}`, peer: `bcp${digest}` };
  };
  const ip = async (args: string[], options: { tolerate?: boolean } = {}) => {
    try {
      await exec('ip', args);
    } catch (err) {
      if (!options.tolerate) throw new BcxOperationError('NETWORK_FAILED', `ip ${args.join(' ')}: ${stderrOf(err) || (err as Error).message}`);
    }
  };
  const netns = (id: string) => `bc-${id}`;
  return {
    netnsPath: (id: string) => `/run/netns/${netns(id)}`,
    /** The lowest address of the subnet that no other instance holds (the bridge has the first). */
    allocate(taken: ReadonlySet<string>): string {
      for (let n = first + 2; n <= last; n++) if (!taken.has(toIp(n))) return toIp(n);
      throw new BcxOperationError('NETWORK_FULL', `no free address left in ${network.subnet}`);
    },
    /** Makes the instance's namespace afresh (one a crash left behind goes first) and wires it to the bridge. */
    async attach(id: string, address: string): Promise<void> {
      await exec('ip', ['link', 'show', network.bridge]).catch(async () => {
        await ip(['link', 'add', 'name', network.bridge, 'type', 'bridge']);
        await ip(['addr', 'add', `${gateway}/${prefix}`, 'dev', network.bridge]);
      });
      await ip(['link', 'set', network.bridge, 'up']);
      await this.detach(id);
      const { host, peer } = ends(id);
      await ip(['netns', 'add', netns(id)]);
      await ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', peer]);
      await ip(['link', 'set', peer, 'netns', netns(id)]);
      const inside = (...args: string[]) => ip(['-n', netns(id), ...args]);
      await inside('link', 'set', peer, 'name', 'eth0');
      await inside('addr', 'add', `${address}/${prefix}`, 'dev', 'eth0');
      await inside('link', 'set', 'lo', 'up');
      await inside('link', 'set', 'eth0', 'up');
      await inside('route', 'add', 'default', 'via', gateway);
      await ip(['link', 'set', host, 'master', network.bridge, 'up']);
    },
    /** Removes the instance's veth pair and namespace, whichever are there. */
    async detach(id: string): Promise<void> {
      await ip(['link', 'del', ends(id).host], { tolerate: true });
      await ip(['netns', 'del', netns(id)], { tolerate: true });
    },
  };
}
export type ContainerNetwork = ReturnType<typeof containerNetwork>;
