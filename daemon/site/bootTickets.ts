import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_RAMDISK_BOOT_BUDGET_MS } from '../../schemas/trust/ramdiskBoot.ts';
import { writeFileDurably } from '../agent/durableFile.ts';

/** The power step attempt a ticket was minted for (the command that reset the machine). */
export interface TicketedBoot {
  workflowId: string;
  stepIndex: number;
  attempt: number;
}

/** One boot's ticket: the secret part of the boot script's URL, good for one fetch. */
export interface BootTicket {
  nodeId: string;
  ticketId: string;
  boot: TicketedBoot;
  /** The first fetch must come before this (ms): the reset plus the boot budget. */
  expiresAtMs: number;
  state: 'fresh' | 'fetching' | 'spent';
}

interface Saved {
  /** Nodes set to boot PXE (`boot.setOnce Pxe`) whose reset has not been sent yet. */
  pending: string[];
  tickets: Record<string, BootTicket>;
}

/** What a fetch of `/boot/<node>/<ticket>.ipxe` is: the boot's first (serve it), a second (an alarm), or nothing known. */
export type TicketFetch = { kind: 'first'; ticket: BootTicket } | { kind: 'again'; ticket: BootTicket } | { kind: 'unknown' };

/** `BC_RAMDISK_BOOT_BUDGET_MS`: how long after the reset a machine has to fetch its boot script. */
export function ramdiskBootBudgetMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BC_RAMDISK_BOOT_BUDGET_MS;
  if (raw === undefined || raw === '') return DEFAULT_RAMDISK_BOOT_BUDGET_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1_000) throw new Error(`BC_RAMDISK_BOOT_BUDGET_MS must be an integer of at least 1000 (ms), not ${raw}`);
  return ms;
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Per-boot tickets of the machines' iPXE scripts (finding 1 of issue 31). `boot.setOnce Pxe` says the node's next
 * reset is a ramdisk boot; the `power.set` that resets it mints a ticket (32 random bytes) bound to that power step
 * attempt, just before the BMC is asked, so the URL exists only from the reset on and a tenant's OS learns nothing
 * from DHCP before it. The first fetch spends the ticket; a fetch after that is reported, never served. Any other boot
 * target, `boot.clear` or the next reset withdraws it. Kept in `<stateDir>/boot-tickets.json` (0600) so a site agent
 * restarted mid-boot still knows a spent ticket from a fresh one.
 */
export class BootTickets {
  readonly #file: string;
  readonly #saved: Saved;
  readonly #budgetMs: number;
  readonly #now: () => number;

  constructor(stateDir: string, options: { budgetMs?: number; now?: () => number } = {}) {
    this.#file = join(stateDir, 'boot-tickets.json');
    this.#budgetMs = options.budgetMs ?? ramdiskBootBudgetMs();
    this.#now = options.now ?? Date.now;
    this.#saved = existsSync(this.#file) ? (JSON.parse(readFileSync(this.#file, 'utf8')) as Saved) : { pending: [], tickets: {} };
  }

  /** `boot.setOnce Pxe`: the node's next reset boots the ramdisk. */
  expectRamdiskBoot(nodeId: string): void {
    this.#saved.pending = [...new Set([...this.#saved.pending, nodeId])];
    this.#save();
  }

  /** Another boot target, `boot.clear`: no ramdisk boot is due; an unspent ticket is withdrawn. */
  withdraw(nodeId: string): void {
    if (!this.#saved.pending.includes(nodeId) && !(nodeId in this.#saved.tickets)) return;
    this.#saved.pending = this.#saved.pending.filter((n) => n !== nodeId);
    delete this.#saved.tickets[nodeId];
    this.#save();
  }

  /** Before a reset is sent: a fresh ticket for this boot when the node is set to boot the ramdisk, else none. */
  mintForReset(nodeId: string, boot: TicketedBoot): BootTicket | undefined {
    const previous = this.#saved.tickets[nodeId];
    if (!this.#saved.pending.includes(nodeId) && !previous) return undefined;
    const ticket: BootTicket = { nodeId, ticketId: randomBytes(32).toString('base64url'), boot, expiresAtMs: this.#now() + this.#budgetMs, state: 'fresh' };
    // A reset of a machine already in its ramdisk boot (a retried power step, a rewind) boots it again: a new ticket.
    this.#saved.pending = this.#saved.pending.filter((n) => n !== nodeId);
    this.#saved.tickets[nodeId] = ticket;
    this.#save();
    return ticket;
  }

  /** The BMC refused the reset: the ticket of a reset that never happened is withdrawn, the boot still due. */
  resetRefused(ticket: BootTicket): void {
    if (this.#saved.tickets[ticket.nodeId]?.ticketId !== ticket.ticketId) return;
    delete this.#saved.tickets[ticket.nodeId];
    this.#saved.pending = [...new Set([...this.#saved.pending, ticket.nodeId])];
    this.#save();
  }

  /** The URL path of the node's current boot, while its first fetch is due or done; undefined otherwise. */
  pathOf(nodeId: string): string | undefined {
    const ticket = this.#saved.tickets[nodeId];
    if (!ticket || (ticket.state === 'fresh' && this.#now() > ticket.expiresAtMs)) return undefined;
    return `/boot/${nodeId}/${ticket.ticketId}.ipxe`;
  }

  /** A fetch: the first takes the ticket (`spent` or `released` settles it); any later one is `again`. Constant-time match. */
  take(nodeId: string, ticketId: string): TicketFetch {
    const ticket = this.#saved.tickets[nodeId];
    if (!ticket || !same(ticket.ticketId, ticketId)) return { kind: 'unknown' };
    if (ticket.state !== 'fresh') return { kind: 'again', ticket };
    if (this.#now() > ticket.expiresAtMs) return { kind: 'unknown' };
    ticket.state = 'fetching';
    return { kind: 'first', ticket };
  }

  /** The script was served: every later fetch is an alarm. */
  spent(ticket: BootTicket): void {
    ticket.state = 'spent';
    this.#save();
  }

  /** No script could be made (the control plane did not answer): iPXE asks again with the same ticket. */
  released(ticket: BootTicket): void {
    if (ticket.state === 'fetching') ticket.state = 'fresh';
  }

  #save(): void {
    writeFileDurably(this.#file, JSON.stringify(this.#saved, null, 2), { mode: 0o600 });
  }
}
