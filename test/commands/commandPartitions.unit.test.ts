import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMMAND_PARTITIONS, commandNameOf, commandPartitionOf, partitionOwner } from '../../schemas/commandPartitions.ts';
import { Subjects } from '../../schemas/subjects.ts';
import { commandRouteKey } from '../../services/platform/commands/commandDefinition.ts';
import '../../services/api/commandCatalog.ts';
import { ResponderRoster } from '../../services/commands/responderRoster.ts';

const partitions = Array.from({ length: COMMAND_PARTITIONS }, (_, p) => p);
const ownership = (members: readonly string[]) => partitions.map((p) => partitionOwner(members, p));
const responderIds = fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 8 });

describe('command partitions', () => {
  it('give every partition exactly one owner among the members, whatever order they are listed in', () => {
    fc.assert(
      fc.property(responderIds, (members) => {
        const owners = ownership(members);
        for (const owner of owners) expect(members).toContain(owner);
        expect(ownership([...members].reverse())).toEqual(owners);
      }),
    );
    expect(partitionOwner([], 3)).toBeUndefined();
  });

  it('move only the leaver’s partitions when a member leaves, and only to a newcomer when one joins', () => {
    fc.assert(
      fc.property(responderIds, fc.uuid(), fc.nat(), (members, newcomer, pick) => {
        fc.pre(!members.includes(newcomer));
        const before = ownership(members);
        const joined = ownership([...members, newcomer]);
        partitions.forEach((p) => {
          if (joined[p] !== before[p]) expect(joined[p]).toBe(newcomer);
        });
        const leaver = members[pick % members.length]!;
        const left = ownership(members.filter((m) => m !== leaver));
        partitions.forEach((p) => {
          if (left[p] !== before[p]) expect(before[p]).toBe(leaver);
        });
      }),
    );
  });

  it('share the partitions out near evenly', () => {
    const members = ['3f0c6a8e-commands-a', '9b71d2c4-commands-b', 'c2e5f817-commands-c'];
    const shares = members.map((m) => ownership(members).filter((o) => o === m).length);
    expect(shares.reduce((a, b) => a + b, 0)).toBe(COMMAND_PARTITIONS);
    for (const share of shares) expect(share).toBeGreaterThan(COMMAND_PARTITIONS / 6);
    // Aggregate keys that differ in their last character still land in many partitions.
    const spread = new Set(Array.from({ length: 200 }, (_, i) => commandPartitionOf(`vps.tenant.bench-t${String(i).padStart(3, '0')}`)));
    expect(spread.size).toBeGreaterThan(COMMAND_PARTITIONS * 0.9);
  });

  it('route a defined command by the aggregate it is decided on, and nothing else', () => {
    const create = { tenantId: 'acme', instanceId: 'vm-1', poolId: 'p1', flavorId: 'small', image: 'debian-12', sshKeys: [] };
    expect(commandRouteKey('vps.createInstance', create, 'c-1')).toBe('vps.tenant.acme');
    expect(commandRouteKey('vps.recordInstanceObserved', { instanceId: 'vm-1' }, 'c-1')).toBe('vps.instance.vm-1');
    // Not defined here, no aggregate named, or no payload at all: the queue group answers.
    expect(commandRouteKey('metal.explode', create, 'c-1')).toBeUndefined();
    expect(commandRouteKey('vps.createInstance', { instanceId: 'vm-1' }, 'c-1')).toBeUndefined();
    expect(commandRouteKey('vps.createInstance', null, 'c-1')).toBeUndefined();
  });

  it('read the command name from either request subject', () => {
    expect(commandNameOf(Subjects.command('vps.createInstance'))).toBe('vps.createInstance');
    expect(commandNameOf(Subjects.partitionedCommand(17, 'vps.createInstance'))).toBe('vps.createInstance');
    expect(Subjects.partitionedCommand(17, 'vps.createInstance').startsWith(Subjects.allCommands.slice(0, -1))).toBe(false);
  });

  it('count a responder from its first word until it leaves or falls silent for the expiry', () => {
    const roster = new ResponderRoster(6_500);
    expect(roster.hear({ responderId: 'a', state: 'hello' }, 0)).toBe(true);
    expect(roster.hear({ responderId: 'b', state: 'alive' }, 0)).toBe(true);
    expect(roster.hear({ responderId: 'a', state: 'alive' }, 4_000)).toBe(false);
    expect(roster.expire(6_500)).toBe(false);
    expect(roster.view(6_501).map((r) => r.responderId)).toEqual(['a']);
    expect(roster.view(6_501)[0]!.partitions).toEqual(partitions);
    expect(roster.hear({ responderId: 'a', state: 'leaving' }, 6_600)).toBe(true);
    expect(roster.hear({ responderId: 'a', state: 'leaving' }, 6_700)).toBe(false);
    expect(roster.members()).toEqual([]);
  });
});
