import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_RAMDISK_BOOT_BUDGET_MS } from '../../schemas/trust/ramdiskBoot.ts';
import { syncFolder, writeFileDurably } from '../agent/durableFile.ts';

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

/** One node's file: set to boot PXE with the reset not sent yet (`pending`), and its current boot's ticket. */
interface SavedNode {
  pending: boolean;
  ticket?: BootTicket;
}

/** The single file of every node's tickets that older site agents kept: read once, then split into one per node. */
interface LegacySaved {
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
 * target, `boot.clear` or the next reset withdraws it. Kept in `<stateDir>/boot-tickets/<node>.json` (0600), one file
 * per node, so a site agent restarted mid-boot still knows a spent ticket from a fresh one, and a change costs one small
 * durable write whatever the number of machines (one file of all of them was written whole, fsynced, on every change:
 * at 1,000 machines, hundreds of KB per ticket; issue 34).
 */
export class BootTickets {
  readonly #dir: string;
  readonly #pending = new Set<string>();
  readonly #tickets = new Map<string, BootTicket>();
  readonly #budgetMs: number;
  readonly #now: () => number;

  constructor(stateDir: string, options: { budgetMs?: number; now?: () => number } = {}) {
    this.#dir = join(stateDir, 'boot-tickets');
    this.#budgetMs = options.budgetMs ?? ramdiskBootBudgetMs();
    this.#now = options.now ?? Date.now;
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(this.#dir)) {
      if (!name.endsWith('.json')) continue;
      const nodeId = decodeURIComponent(name.slice(0, -'.json'.length));
      const saved = JSON.parse(readFileSync(join(this.#dir, name), 'utf8')) as SavedNode;
      if (saved.pending) this.#pending.add(nodeId);
      if (saved.ticket) this.#tickets.set(nodeId, saved.ticket);
    }
    const legacy = join(stateDir, 'boot-tickets.json');
    if (existsSync(legacy)) {
      const saved = JSON.parse(readFileSync(legacy, 'utf8')) as LegacySaved;
      for (const nodeId of saved.pending) this.#pending.add(nodeId);
      for (const [nodeId, ticket] of Object.entries(saved.tickets)) this.#tickets.set(nodeId, ticket);
      for (const nodeId of new Set([...saved.pending, ...Object.keys(saved.tickets)])) this.#save(nodeId);
      unlinkSync(legacy);
      syncFolder(stateDir);
    }
  }

  /** `boot.setOnce Pxe`: the node's next reset boots the ramdisk. */
  expectRamdiskBoot(nodeId: string): void {
    this.#pending.add(nodeId);
    this.#save(nodeId);
  }

  /** Another boot target, `boot.clear`: no ramdisk boot is due; an unspent ticket is withdrawn. */
  withdraw(nodeId: string): void {
    if (!this.#pending.has(nodeId) && !this.#tickets.has(nodeId)) return;
    this.#pending.delete(nodeId);
    this.#tickets.delete(nodeId);
    this.#save(nodeId);
  }

  /** Before a reset is sent: a fresh ticket for this boot when the node is set to boot the ramdisk, else none. */
  mintForReset(nodeId: string, boot: TicketedBoot): BootTicket | undefined {
    if (!this.#pending.has(nodeId) && !this.#tickets.has(nodeId)) return undefined;
    const ticket: BootTicket = { nodeId, ticketId: randomBytes(32).toString('base64url'), boot, expiresAtMs: this.#now() + this.#budgetMs, state: 'fresh' };
    // A reset of a machine already in its ramdisk boot (a retried power step, a rewind) boots it again: a new ticket.
    this.#pending.delete(nodeId);
    this.#tickets.set(nodeId, ticket);
    this.#save(nodeId);
    return ticket;
  }

  /** The BMC refused the reset: the ticket of a reset that never happened is withdrawn, the boot still due. */
  resetRefused(ticket: BootTicket): void {
    if (this.#tickets.get(ticket.nodeId)?.ticketId !== ticket.ticketId) return;
    this.#tickets.delete(ticket.nodeId);
    this.#pending.add(ticket.nodeId);
    this.#save(ticket.nodeId);
  }

  /** The URL path of the node's current boot, while its first fetch is due or done; undefined otherwise. */
  pathOf(nodeId: string): string | undefined {
    const ticket = this.#tickets.get(nodeId);
    if (!ticket || (ticket.state === 'fresh' && this.#now() > ticket.expiresAtMs)) return undefined;
    return `/boot/${nodeId}/${ticket.ticketId}.ipxe`;
  }

  /** A fetch: the first takes the ticket (`spent` or `released` settles it); any later one is `again`. Constant-time match. */
  take(nodeId: string, ticketId: string): TicketFetch {
    const ticket = this.#tickets.get(nodeId);
    if (!ticket || !same(ticket.ticketId, ticketId)) return { kind: 'unknown' };
    if (ticket.state !== 'fresh') return { kind: 'again', ticket };
    if (this.#now() > ticket.expiresAtMs) return { kind: 'unknown' };
    ticket.state = 'fetching';
    return { kind: 'first', ticket };
  }

  /** The script was served: every later fetch is an alarm. */
  spent(ticket: BootTicket): void {
    ticket.state = 'spent';
    this.#save(ticket.nodeId);
  }

  /** No script could be made (the control plane did not answer): iPXE asks again with the same ticket. */
  released(ticket: BootTicket): void {
    if (ticket.state === 'fetching') ticket.state = 'fresh';
  }

  /** The node's file as it stands now; none once nothing is due or kept for it. */
  #save(nodeId: string): void {
    const file = join(this.#dir, `${encodeURIComponent(nodeId)}.json`);
    const pending = this.#pending.has(nodeId);
    const ticket = this.#tickets.get(nodeId);
    if (!pending && !ticket) {
      rmSync(file, { force: true });
      syncFolder(this.#dir);
      return;
    }
    writeFileDurably(file, JSON.stringify({ pending, ...(ticket ? { ticket } : {}) } satisfies SavedNode), { mode: 0o600 });
  }
}
