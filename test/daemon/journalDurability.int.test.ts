import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommandJournal } from '../../daemon/agent/journal.ts';

const dirs: string[] = [];
const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'bc-journal-'));
  dirs.push(dir);
  return dir;
};

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('CommandJournal durability', () => {
  it.each(['process-crash', 'power-loss'] as const)('%s: a start and a result written by a journal never closed are seen by the next one', (durability) => {
    const dir = stateDir();
    // The first journal is left open, as a process that crashed leaves it: no close, no checkpoint.
    const crashed = new CommandJournal(dir, { durability });
    crashed.started('cmd-1', 'disk.wipe', true, 1_000);
    crashed.started('cmd-2', 'inventory.read', false, 2_000);
    crashed.finished('cmd-2', 'inventory.read', false, new Uint8Array([1, 2, 3]), 2_500);

    const next = new CommandJournal(dir, { durability });
    try {
      expect(next.get('cmd-1')).toEqual({ state: 'started', commandId: 'cmd-1', kind: 'disk.wipe', destructive: true, startedAtMs: 1_000 });
      expect(next.get('cmd-2')).toEqual({
        state: 'finished',
        commandId: 'cmd-2',
        kind: 'inventory.read',
        destructive: false,
        startedAtMs: 2_000,
        resultBytes: new Uint8Array([1, 2, 3]),
      });
    } finally {
      next.close();
      crashed.close();
    }
  });
});
