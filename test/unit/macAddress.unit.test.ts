import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MacAddress } from '../../schemas/metal/macAddress.ts';
import { Inventory } from '../../schemas/metal/inventory.ts';

const inventory = {
  manufacturer: 'QEMU',
  model: 'Standard PC',
  serial: null,
  productUuid: null,
  cpus: { count: 1, model: null, cores: null },
  memoryMiB: 1024,
  disks: [],
  nics: [{ id: 'nic0', mac: '52:54:00:12:34:56' }],
};

describe('MacAddress', () => {
  it('normalises upper case and dashes to lower-case colon form, and refuses what is no MAC', () => {
    expect(MacAddress.parse('52-54-00-AB-CD-EF')).toBe('52:54:00:ab:cd:ef');
    expect(MacAddress.safeParse('52:54:00:ab:cd').success).toBe(false);
  });

  it('encodes inside API responses (a transform there made every node view with an inventory a 500)', () => {
    expect(z.encode(Inventory, inventory)).toEqual(inventory);
  });
});
