import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileDurably } from '../../agent/durableFile.ts';

/** One node the control plane set to boot PXE: its NICs' MACs (lower-case, colon-separated), and since when. */
interface Arm {
  macs: string[];
  armedAt: number;
}

/** How long an arm lasts by default: a slow TCG boot and a few iPXE retries, not a later, unplanned boot. */
export const DEFAULT_ARM_TTL_MS = 30 * 60_000;

const normalMac = (mac: string) => mac.trim().toLowerCase().replaceAll('-', ':');

/**
 * The MACs `bcd site`'s boot path answers. A machine is armed when the site agent runs `boot.setOnce Pxe` for its node
 * (the control plane decided it boots the ramdisk next), with the MACs its BMC reports; any other boot target, or the
 * arm's age, disarms it. Kept in `<stateDir>/pxe-arms.json` so a site agent killed between the boot override and the
 * machine's DHCP still answers it after its restart. A MAC of no armed node gets no PXE answer at all.
 */
export class PxeArms {
  readonly #file: string;
  readonly #arms: Record<string, Arm>;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(stateDir: string, options: { ttlMs?: number; now?: () => number } = {}) {
    this.#file = join(stateDir, 'pxe-arms.json');
    this.#ttlMs = options.ttlMs ?? DEFAULT_ARM_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#arms = existsSync(this.#file) ? (JSON.parse(readFileSync(this.#file, 'utf8')) as Record<string, Arm>) : {};
  }

  arm(nodeId: string, macs: readonly string[]): void {
    this.#arms[nodeId] = { macs: [...new Set(macs.map(normalMac))], armedAt: this.#now() };
    this.#save();
  }

  disarm(nodeId: string): void {
    if (!(nodeId in this.#arms)) return;
    delete this.#arms[nodeId];
    this.#save();
  }

  /** The armed node a MAC belongs to, or undefined (unknown MAC, node not set to boot PXE, arm expired). */
  nodeOf(mac: string): { nodeId: string } | undefined {
    const wanted = normalMac(mac);
    for (const [nodeId, arm] of Object.entries(this.#arms)) {
      if (this.#now() - arm.armedAt > this.#ttlMs) continue;
      if (arm.macs.includes(wanted)) return { nodeId };
    }
    return undefined;
  }

  /** Node ids armed now, for logs and tests. */
  armed(): string[] {
    return Object.keys(this.#arms).filter((nodeId) => this.nodeOf(this.#arms[nodeId]!.macs[0] ?? '')?.nodeId === nodeId);
  }

  #save(): void {
    writeFileDurably(this.#file, JSON.stringify(this.#arms, null, 2), { mode: 0o600 });
  }
}
