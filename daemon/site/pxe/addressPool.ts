import type { Lease } from './pxeAnswer.ts';

export interface AddressPoolOptions {
  /** First and last address handed out, inclusive (one /24 or smaller range). */
  first: string;
  last: string;
  subnetMask: string;
  router?: string;
  dnsServers?: readonly string[];
  leaseSeconds?: number;
}

const toInt = (ip: string) => ip.split('.').reduce((n, p) => n * 256 + Number(p), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

/**
 * The addresses `bcd site` hands out when it is the network's DHCP server (`--dhcp-pool`). A MAC keeps its address
 * while this process runs, so a machine that reboots into the ramdisk and then into its OS keeps one address; only
 * known nodes ask, so the pool never fills with strangers.
 */
export class AddressPool {
  readonly #byMac = new Map<string, string>();
  readonly #taken = new Set<string>();
  readonly #first: number;
  readonly #last: number;

  constructor(readonly options: AddressPoolOptions) {
    this.#first = toInt(options.first);
    this.#last = toInt(options.last);
    if (!(this.#first <= this.#last)) throw new RangeError(`address pool ${options.first}-${options.last} is empty`);
  }

  /** The lease for `mac`: its address if it has one, else the lowest free one; undefined when the pool is full. */
  leaseFor(mac: string): Lease | undefined {
    let address = this.#byMac.get(mac);
    if (!address) {
      for (let n = this.#first; n <= this.#last && !address; n++) if (!this.#taken.has(toIp(n))) address = toIp(n);
      if (!address) return undefined;
      this.#byMac.set(mac, address);
      this.#taken.add(address);
    }
    const { subnetMask, router, dnsServers, leaseSeconds = 3600 } = this.options;
    return { address, subnetMask, leaseSeconds, ...(router ? { router } : {}), ...(dnsServers ? { dnsServers } : {}) };
  }

  /** The address this pool gave `mac`, without allocating one. */
  addressOf(mac: string): string | undefined {
    return this.#byMac.get(mac);
  }
}
