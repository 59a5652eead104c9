import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BootTickets } from '../../daemon/site/bootTickets.ts';
import { tempDir } from '../support/natsServer.ts';

const boot = (workflowId: string) => ({ workflowId, stepIndex: 1, attempt: 1 });

describe('boot tickets on disk', () => {
  it('keeps one file per node: a change to one node writes only its own, and a restart knows a spent ticket', () => {
    using dir = tempDir();
    const tickets = new BootTickets(dir.path, { budgetMs: 60_000 });
    tickets.expectRamdiskBoot('n1');
    const first = tickets.mintForReset('n1', boot('w1'))!;
    const n1File = join(dir.path, 'boot-tickets', 'n1.json');
    const before = statSync(n1File);
    // Another node's boot, start to end, leaves n1's file as it was.
    tickets.expectRamdiskBoot('n2');
    const second = tickets.mintForReset('n2', boot('w2'))!;
    const taken = tickets.take('n2', second.ticketId);
    expect(taken.kind).toBe('first');
    tickets.spent(second);
    expect(statSync(n1File)).toMatchObject({ ino: before.ino, mtimeMs: before.mtimeMs, size: before.size });
    expect(readdirSync(join(dir.path, 'boot-tickets')).sort()).toEqual(['n1.json', 'n2.json']);

    // A site agent started again: n2's script was served (a second fetch is an alarm), n1's ticket is still fresh.
    const restarted = new BootTickets(dir.path, { budgetMs: 60_000 });
    expect(restarted.take('n2', second.ticketId).kind).toBe('again');
    expect(restarted.take('n1', first.ticketId).kind).toBe('first');
    // Withdrawn: nothing is kept for the node.
    restarted.withdraw('n2');
    expect(existsSync(join(dir.path, 'boot-tickets', 'n2.json'))).toBe(false);
    expect(new BootTickets(dir.path).pathOf('n2')).toBeUndefined();
  });

  it('takes over the single file older site agents kept, pending boots and spent tickets alike', () => {
    using dir = tempDir();
    const spent = { nodeId: 'n1', ticketId: 'a'.repeat(43), boot: boot('w1'), expiresAtMs: Date.now() + 60_000, state: 'spent' };
    writeFileSync(join(dir.path, 'boot-tickets.json'), JSON.stringify({ pending: ['n2'], tickets: { n1: spent } }));
    const tickets = new BootTickets(dir.path, { budgetMs: 60_000 });
    expect(existsSync(join(dir.path, 'boot-tickets.json'))).toBe(false);
    expect(tickets.take('n1', spent.ticketId).kind).toBe('again');
    expect(tickets.mintForReset('n2', boot('w2'))).toBeDefined();
    expect(new BootTickets(dir.path).take('n1', spent.ticketId).kind).toBe('again');
  });
});
