import { describe, expect, it } from 'vitest';
import { holdRequestOf } from '../../scripts/cli/holdCommands.ts';

describe('holds place (CLI)', () => {
  it('the CLI sends whole-node holds without resources and capacity holds with all three sizes', () => {
    expect(holdRequestOf({ site: 'dc1', nodes: 2, duration: 600, label: ['zone=a'], tenant: 't1' })).toEqual({
      siteId: 'dc1',
      nodes: 2,
      durationSeconds: 600,
      selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      holder: { tenantId: 't1' },
    });
    expect(holdRequestOf({ site: 'dc1', nodes: 1, duration: 60, label: [], pool: 'p1', vcpus: 2, memoryMib: 1_024, diskGib: 10 })).toMatchObject({
      holder: { poolId: 'p1' },
      resources: { vcpus: 2, memoryMib: 1_024, diskGib: 10 },
    });
    expect(() => holdRequestOf({ site: 'dc1', nodes: 1, duration: 60, label: [], vcpus: 2 })).toThrow(/together/);
    expect(() => holdRequestOf({ site: 'dc1', nodes: 1, duration: 60, label: [], tenant: 't', pool: 'p' })).toThrow(/not both/);
  });
});
