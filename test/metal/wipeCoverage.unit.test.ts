import { describe, expect, it } from 'vitest';
import type { Inventory } from '../../schemas/metal/inventory.ts';
import type { WipedDisk } from '../../schemas/agent/diskWipe.ts';
import { wipeCoverage } from '../../services/workflow/workflow/wipeCoverage.ts';
import { fakeInventory } from './fakeAgent.ts';

const GiB = 1 << 30;
const zeroed = (path: string, serial: string | null, sizeBytes: number): Extract<WipedDisk, { method: 'zero' }> => ({
  path,
  serial,
  model: null,
  sizeBytes,
  method: 'zero',
  verifiedBytes: sizeBytes,
});
const discarded = (path: string, serial: string | null, sizeBytes: number): WipedDisk => ({
  path,
  serial,
  model: null,
  sizeBytes,
  method: 'discard',
  discardedBytes: sizeBytes,
  secure: false,
  sample: { seed: '0'.repeat(32), count: 1024, blockBytes: 4096 },
});
const inventoryWith = (disks: Inventory['disks']): Inventory => ({ ...fakeInventory, disks });
const report = (...disks: WipedDisk[]) => ({ method: 'zero', disks });

describe('wipeCoverage', () => {
  it('covers a node when every inventory drive was wiped end to end with its size, matched by serial', () => {
    const inventory = inventoryWith([
      { id: 'Disk-0', sizeBytes: 8 * GiB, model: null, serial: 'S-A' },
      { id: 'Disk-1', sizeBytes: 4 * GiB, model: null, serial: 's-b' },
    ]);
    const wiped = report(zeroed('/dev/sdb', 'S-B ', 4 * GiB), discarded('/dev/sda', 'S-A', 8 * GiB), zeroed('/dev/sdc', 'EXTRA', GiB));
    expect(wipeCoverage(wiped, inventory)).toEqual({ covered: true, report: wiped });
  });

  it('matches drives without a serial by size, each wiped disk once', () => {
    const inventory = inventoryWith([
      { id: 'a', sizeBytes: GiB, model: null, serial: null },
      { id: 'b', sizeBytes: GiB, model: null, serial: null },
    ]);
    expect(wipeCoverage(report(zeroed('/dev/vda', null, GiB), zeroed('/dev/vdb', null, GiB)), inventory).covered).toBe(true);
    expect(wipeCoverage(report(zeroed('/dev/vda', null, GiB)), inventory)).toEqual({
      covered: false,
      reason: 'drive b (serial unknown, 1073741824 bytes) is not in the wipe result',
    });
  });

  it('refuses a wipe that covers fewer disks, fewer bytes, or a differently sized disk than the inventory', () => {
    const inventory = inventoryWith([
      { id: 'Disk-0', sizeBytes: 8 * GiB, model: null, serial: 'S-A' },
      { id: 'Disk-1', sizeBytes: 4 * GiB, model: null, serial: 'S-B' },
    ]);
    expect(wipeCoverage(report(zeroed('/dev/sda', 'S-A', 8 * GiB)), inventory)).toEqual({
      covered: false,
      reason: 'drive Disk-1 (serial S-B, 4294967296 bytes) is not in the wipe result',
    });
    const short = { ...zeroed('/dev/sdb', 'S-B', 4 * GiB), verifiedBytes: 4 * GiB - 512 };
    expect(wipeCoverage(report(zeroed('/dev/sda', 'S-A', 8 * GiB), short), inventory)).toEqual({
      covered: false,
      reason: '/dev/sdb was erased over 4294966784 of its 4294967296 bytes',
    });
    // The kernel sees less than the BMC reports (a host-protected area): the hidden part was never wiped.
    expect(wipeCoverage(report(zeroed('/dev/sda', 'S-A', 8 * GiB), zeroed('/dev/sdb', 'S-B', 2 * GiB)), inventory)).toEqual({
      covered: false,
      reason: 'drive Disk-1 (serial S-B, 4294967296 bytes) was wiped as /dev/sdb of 2147483648 bytes',
    });
    const halfDiscarded = { ...discarded('/dev/sda', 'S-A', 8 * GiB), discardedBytes: GiB };
    expect(wipeCoverage(report(halfDiscarded, zeroed('/dev/sdb', 'S-B', 4 * GiB)), inventory).covered).toBe(false);
  });

  it('refuses a drive it cannot match, a result that names no disk, and any other payload', () => {
    const anonymous = inventoryWith([{ id: 'mystery', sizeBytes: null, model: null, serial: null }]);
    expect(wipeCoverage(report(zeroed('/dev/sda', null, GiB)), anonymous)).toEqual({
      covered: false,
      reason: 'drive mystery has neither a serial nor a size: no wiped disk can be matched to it',
    });
    expect(wipeCoverage(report(), inventoryWith([])).covered).toBe(false);
    expect(wipeCoverage({ disks: [{ id: 'nvme0', verified: true }] }, fakeInventory).covered).toBe(false);
    expect(wipeCoverage(report({ ...zeroed('/dev/sda', null, 0) }), inventoryWith([])).covered).toBe(false);
    expect(wipeCoverage(null, fakeInventory).covered).toBe(false);
  });

  it('checks the result on its own when the node has no recorded inventory, or its BMC lists no drives', () => {
    expect(wipeCoverage(report(zeroed('/dev/sda', null, GiB)), null).covered).toBe(true);
    expect(wipeCoverage(report(zeroed('/dev/sda', null, GiB)), inventoryWith([])).covered).toBe(true);
    expect(wipeCoverage(report({ ...zeroed('/dev/sda', null, GiB), verifiedBytes: 0 }), null).covered).toBe(false);
  });
});
