import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InstanceJournal, type InstanceRecord } from '../../daemon/node/instances/instanceJournal.ts';
import { fitInstanceReports, reportOf } from '../../daemon/node/instances/instanceReports.ts';

const dirs: string[] = [];
const journalIn = () => {
  const dir = mkdtempSync(join(tmpdir(), 'bc-instance-journal-'));
  dirs.push(dir);
  return new InstanceJournal(dir);
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const record = (id: string, over: Partial<InstanceRecord> = {}): InstanceRecord => ({
  spec: { id, runtime: 'crun', flavor: { name: 'small', vcpus: 1, memoryMiB: 512, diskGiB: 10 }, image: { ref: 'oci:alpine' }, desiredState: 'running' },
  firstApplied: false,
  settled: false,
  status: null,
  recordedAt: '2026-12-06T23:00:00.000Z',
  ...over,
});

describe('the instance journal', () => {
  it('reads back what it wrote, one 0600 file per instance, and forgets it', () => {
    const journal = journalIn();
    expect(journal.read('vm-1')).toBeUndefined();
    expect(journal.all()).toEqual({ records: [], unreadable: [] });
    journal.write(record('vm-1'));
    journal.write(record('vm-2', { settled: true, firstApplied: true, status: { id: 'vm-2', state: 'running', addresses: ['10.0.0.2'] } }));
    expect(journal.read('vm-1')).toEqual(record('vm-1'));
    expect(journal.all().records.map((r) => r.spec.id)).toEqual(['vm-1', 'vm-2']);
    expect(statSync(join(journal.folder, 'vm-1.json')).mode & 0o777).toBe(0o600);
    expect(statSync(journal.folder).mode & 0o777).toBe(0o700);
    journal.forget('vm-1');
    journal.forget('vm-1');
    expect(journal.read('vm-1')).toBeUndefined();
    expect(journal.all().records.map((r) => r.spec.id)).toEqual(['vm-2']);
  });

  it('keeps user data apart, 0600, until it is dropped; a record never holds it', () => {
    const journal = journalIn();
    journal.keepUserData('vm-1', '#cloud-config\n');
    expect(statSync(join(journal.folder, 'vm-1.userdata')).mode & 0o777).toBe(0o600);
    expect(journal.userData('vm-1')).toBe('#cloud-config\n');
    expect(() => journal.write({ ...record('vm-1'), spec: { ...record('vm-1').spec, userData: 'x' } } as InstanceRecord)).toThrow();
    journal.dropUserData('vm-1');
    expect(journal.userData('vm-1')).toBeUndefined();
    journal.keepUserData('vm-1', 'again');
    journal.forget('vm-1');
    expect(journal.userData('vm-1')).toBeUndefined();
  });

  it('names records it cannot read instead of guessing, and one filed under another id', () => {
    const journal = journalIn();
    journal.write(record('vm-1'));
    writeFileSync(join(journal.folder, 'vm-2.json'), '{"spec":');
    writeFileSync(join(journal.folder, 'vm-3.json'), JSON.stringify(record('vm-1')));
    expect(journal.all()).toEqual({ records: [record('vm-1')], unreadable: ['vm-2.json', 'vm-3.json'] });
    expect(() => journal.read('../etc/passwd')).toThrow();
  });

  it('reports an unanswered apply as pending, whatever the runtime said before', () => {
    const status = { id: 'vm-1', state: 'running' as const, addresses: ['10.0.0.2'], message: 'pid 7' };
    expect(reportOf(record('vm-1', { status, settled: false }))).toEqual({
      id: 'vm-1',
      runtime: 'crun',
      desiredState: 'running',
      state: 'pending',
      addresses: [],
    });
    expect(reportOf(record('vm-1', { status, settled: true }))).toEqual({
      id: 'vm-1',
      runtime: 'crun',
      desiredState: 'running',
      state: 'running',
      addresses: ['10.0.0.2'],
      message: 'pid 7',
    });
  });

  it('fits the heartbeat budget: messages go first, then the list is cut keeping instances off their desired state', () => {
    const reports = Array.from({ length: 120 }, (_, i) =>
      reportOf(
        record(`vm-${i}`, {
          settled: true,
          status: { id: `vm-${i}`, state: i % 10 === 0 ? 'stopped' : 'running', addresses: ['10.0.0.2'], message: 'x'.repeat(300) },
        }),
      ),
    );
    expect(reports[1]!.message).toHaveLength(200);
    expect(fitInstanceReports(reports.slice(0, 2))).toEqual(reports.slice(0, 2));
    const bare = fitInstanceReports(reports.slice(0, 40));
    expect(bare).toHaveLength(40);
    expect(bare.every((r) => r.message === undefined)).toBe(true);
    const cut = fitInstanceReports(reports);
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(8 * 1024);
    expect(cut.length).toBeGreaterThan(50);
    expect(cut.length).toBeLessThan(120);
    expect(cut.slice(0, 12).map((r) => r.id)).toEqual(Array.from({ length: 12 }, (_, i) => `vm-${i * 10}`));
  });
});
