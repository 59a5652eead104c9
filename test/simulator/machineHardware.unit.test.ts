import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { writeMachineHardware } from '../../daemon/simulator/machineHardware.ts';

const dir = mkdtempSync(join(tmpdir(), 'bc-hw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// A BMC that lists nothing: the kernel view still shows the disks it is given, one socket and 8 GiB.
const bmc = { resource: () => undefined };
const disk = (serial: string) => ({ sizeBytes: 4 << 20, serial, model: 'Sim NVMe' });

describe('writeMachineHardware', () => {
  test('a boot with the same hardware keeps the tree as it is; other hardware replaces it', () => {
    const root = join(dir, 'kernel');
    writeMachineHardware(root, bmc, [disk('S1'), disk('S2')]);
    expect(readdirSync(join(root, 'sys/block')).sort()).toEqual(['nvme0n1', 'nvme1n1']);
    expect(readFileSync(join(root, 'sys/block/nvme1n1/device/serial'), 'utf8')).toBe('S2\n');
    // Something the writer never makes: it survives a boot that keeps the tree, and goes with one that replaces it.
    writeFileSync(join(root, 'proc/left-by-test'), 'x');

    writeMachineHardware(root, bmc, [disk('S1'), disk('S2')]);
    expect(existsSync(join(root, 'proc/left-by-test'))).toBe(true);

    writeMachineHardware(root, bmc, [disk('S1')]);
    expect(readdirSync(join(root, 'sys/block'))).toEqual(['nvme0n1']);
    expect(existsSync(join(root, 'proc/left-by-test'))).toBe(false);
  });

  test('a machine without disks still shows an empty sys/block', () => {
    const root = join(dir, 'diskless');
    writeMachineHardware(root, bmc, []);
    expect(readdirSync(join(root, 'sys/block'))).toEqual([]);
  });
});
