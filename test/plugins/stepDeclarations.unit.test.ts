import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, defineProfile, defineStep } from '../../plugins/sdk/index.ts';
import { registrationOf } from '../../plugins/sdk/definePlugin.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { declarationsBeforeV2, declarationsOf } from '../../schemas/metal/stepDeclarations.ts';
import { PluginRegistration } from '../../schemas/plugins/registration.ts';
import { builtinSteps } from '../../services/plugins/builtinSteps.ts';
import { stepHomes } from '../../services/plugins/profileCatalog.ts';
import { registerPlugin } from '../../services/plugins/registry/register.ts';
import { pluginRegistryAggregate } from '../../services/plugins/registry/registry.ts';
import { thrownCode } from '../support/thrownCode.ts';

const input = z.object({});
const run = async () => null;
const erase = defineStep({ id: 'acme.secureErase', runsOn: 'node', destructive: true, sends: ['disk.wipe'], attests: 'wipe', input, run });
const profile = defineProfile({
  id: 'acme-release',
  version: 1,
  target: 'metal',
  role: 'release',
  steps: [
    { id: 'inventory.read', runsOn: 'site' },
    { id: 'acme.secureErase', runsOn: 'node' },
  ],
});

describe('step declarations (attests, records)', () => {
  it('are kept by defineStep, and refused when unknown or when they cannot hold', () => {
    expect(erase).toMatchObject({ id: 'acme.secureErase', attests: 'wipe' });
    expect(defineStep({ id: 'acme.read', runsOn: 'site', records: 'inventory', input, run })).toMatchObject({ records: 'inventory' });
    const plain = defineStep({ id: 'acme.noop', runsOn: 'control-plane', input, run });
    expect('attests' in plain || 'records' in plain).toBe(false);
    // A wipe is attested only by a signed disk.wipe result, and it destroys data.
    expect(thrownCode(() => defineStep({ id: 'acme.erase', runsOn: 'node', destructive: true, attests: 'wipe', input, run }))).toBe('VALIDATION_FAILED');
    expect(thrownCode(() => defineStep({ id: 'acme.erase', runsOn: 'node', sends: ['disk.wipe'], attests: 'wipe', input, run }))).toBe('VALIDATION_FAILED');
    // What a plain JavaScript plugin could write: no type checker stops it, the definition does.
    expect(thrownCode(() => defineStep({ id: 'acme.erase', runsOn: 'node', records: 'disks' as never, input, run }))).toBe('VALIDATION_FAILED');
  });

  it('are made by the built-in disk.wipe, inventory.read and hardware.probe steps, and by no other', () => {
    const declared = [...builtinSteps.values()].filter((s) => s.attests || s.records);
    expect(Object.fromEntries(declared.map((s) => [s.id, { attests: s.attests, records: s.records }]))).toEqual({
      'disk.wipe': { attests: 'wipe', records: undefined },
      'inventory.read': { attests: undefined, records: 'inventory' },
      'hardware.probe': { attests: undefined, records: 'inBandInventory' },
    });
    // What an old log's steps of these ids are upcast to is what the built-ins declare now.
    expect(Object.fromEntries(declared.map((s) => [s.id, declarationsOf(s)]))).toEqual(declarationsBeforeV2);
  });

  it('travel with the registration into the steps a workflow freezes; a profile cannot set or drop them', () => {
    const registration = registrationOf(definePlugin({ id: 'acme', version: '1.0.0', steps: [erase], profiles: [profile] }));
    expect(registration.steps).toEqual([{ id: 'acme.secureErase', runsOn: 'node', destructive: true, sends: ['disk.wipe'], relays: [], attests: 'wipe' }]);
    const command = registerPlugin.schema.parse(registration);
    const events = registerPlugin.decide(command, pluginRegistryAggregate.initialState, { commandId: 'c1', actor: 't', now: 'now', dependencies: undefined });
    const registry = events.reduce(pluginRegistryAggregate.evolve, pluginRegistryAggregate.initialState);
    const undeclaring = { ...profile, steps: profile.steps.map((s) => ({ ...s, attests: undefined, records: undefined })) };
    for (const p of [profile, undeclaring]) {
      expect(resolveSteps(p, {}, stepHomes(registry)).map((s) => [s.id, s.attests, s.records, s.plugin])).toEqual([
        ['inventory.read', undefined, 'inventory', undefined],
        ['acme.secureErase', 'wipe', undefined, 'acme'],
      ]);
    }
    // The control plane checks a registration the same way (a plugin need not have used this SDK).
    const impossible = { ...registration, steps: [{ ...registration.steps[0]!, sends: [] }] };
    expect(PluginRegistration.safeParse(impossible).success).toBe(false);
    // A registration from before the declarations existed still parses, and declares nothing.
    const older = { ...registration, steps: [{ id: 'acme.secureErase', runsOn: 'node', destructive: true, sends: ['disk.wipe'], relays: [] }] };
    expect(PluginRegistration.parse(older).steps[0]).not.toHaveProperty('attests');
  });

  it('definePlugin reads the deprecated `extensions` as `steps`: both spellings give the same plugin', () => {
    const current = definePlugin({ id: 'acme', version: '1.0.0', steps: [erase], profiles: [profile] });
    const deprecated = definePlugin({ id: 'acme', version: '1.0.0', extensions: [erase], profiles: [profile] });
    expect(deprecated).toEqual(current);
    expect(deprecated).not.toHaveProperty('extensions');
    expect(Object.isFrozen(deprecated)).toBe(true);
    expect(registrationOf(deprecated)).toEqual(registrationOf(current));
    expect(definePlugin({ id: 'acme', version: '1.0.0' }).steps).toEqual([]);
    expect(thrownCode(() => definePlugin({ id: 'acme', version: '1.0.0', steps: [erase], extensions: [erase] }))).toBe('VALIDATION_FAILED');
  });
});
