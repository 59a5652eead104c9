import { describe, expect, it } from 'vitest';
import { PluginRegistered } from '../../schemas/plugins/events.ts';
import type { PluginRegistration } from '../../schemas/plugins/registration.ts';
import { registerPlugin } from '../../services/plugins/registry/register.ts';
import { pluginRegistryAggregate, type PluginRegistryState } from '../../services/plugins/registry/registry.ts';
import { findProfile, validateProfile } from '../../services/plugins/profileCatalog.ts';
import { resolveSteps } from '../../plugins/sdk/defineProfile.ts';
import { stepHomes } from '../../services/plugins/profileCatalog.ts';

const now = '2026-12-02T00:00:00.000Z';
const registration = (over: Partial<PluginRegistration> = {}): PluginRegistration =>
  registerPlugin.schema.parse({
    pluginId: 'acme',
    version: '1.0.0',
    steps: [{ id: 'acme.render', runsOn: 'control-plane', destructive: false, sends: [], relays: [] }],
    profiles: [
      {
        id: 'acme-1.0',
        version: 1,
        target: 'metal',
        role: 'deploy',
        steps: [
          { id: 'acme.render', runsOn: 'control-plane' },
          { id: 'power.set', runsOn: 'site', params: { action: 'cycle' } },
        ],
      },
    ],
    drivers: [],
    providers: [],
    ...over,
  });
const decide = (state: PluginRegistryState, command: PluginRegistration) =>
  registerPlugin.decide(command, state, { commandId: 'c1', actor: 't', now, dependencies: undefined });
const fold = (state: PluginRegistryState, command: PluginRegistration) => decide(state, command).reduce(pluginRegistryAggregate.evolve, state);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

describe('plugin registry', () => {
  const empty = pluginRegistryAggregate.initialState;

  it('records a registration once, and again only when it changed', () => {
    const state = fold(empty, registration());
    expect(decide(state, registration())).toEqual([]);
    expect(decide(state, registration({ version: '1.1.0' }))).toHaveLength(1);
  });

  it('refuses step and profile ids that are built in or belong to another plugin', () => {
    const state = fold(empty, registration());
    expect(codeOf(() => decide(state, registration({ pluginId: 'other', profiles: [] })))).toBe('ALREADY_EXISTS');
    expect(codeOf(() => decide(state, registration({ pluginId: 'other', steps: [], profiles: registration().profiles })))).toBe('ALREADY_EXISTS');
    expect(
      codeOf(() =>
        decide(empty, registration({ steps: [{ id: 'wait.agentJoined', runsOn: 'control-plane', destructive: false, sends: [], relays: [] }], profiles: [] })),
      ),
    ).toBe('ALREADY_EXISTS');
    expect(codeOf(() => decide(empty, registration({ profiles: [{ ...registration().profiles[0]!, id: 'deploy' }] })))).toBe('ALREADY_EXISTS');
    const twice = registration().steps[0]!;
    expect(codeOf(() => decide(empty, registration({ steps: [twice, twice] })))).toBe('VALIDATION_FAILED');
  });

  it('refuses an intervention category that is built in, declared by another plugin, or listed twice', () => {
    const category = {
      category: 'disk-check',
      owner: 'acme',
      disposition: 'auto',
      kind: 'advisory',
      advancement: false,
      approvalTimeoutMs: 60_000,
      description: '',
    } as const;
    const state = fold(empty, registration({ policies: [category] }));
    expect([...state.plugins.values()][0]!.policies).toEqual([category]);
    // The same plugin again, with its category: nothing new.
    expect(decide(state, registration({ policies: [category] }))).toEqual([]);
    expect(codeOf(() => decide(state, registration({ pluginId: 'other', steps: [], profiles: [], policies: [{ ...category, owner: 'other' }] })))).toBe(
      'ALREADY_EXISTS',
    );
    expect(codeOf(() => decide(empty, registration({ policies: [{ ...category, category: 'retry' }] })))).toBe('ALREADY_EXISTS');
    expect(codeOf(() => decide(empty, registration({ policies: [category, category] })))).toBe('VALIDATION_FAILED');
  });

  it('reads a registration stored before plugins declared categories as declaring none', () => {
    const { policies: _, ...older } = registration();
    expect(PluginRegistered.schema.parse({ ...older, registeredAt: now }).policies).toEqual([]);
  });

  it('validates profiles against registered steps and resolves plugin steps to their plugin', () => {
    const state = fold(empty, registration());
    const profile = findProfile(state, 'acme-1.0')!;
    expect(validateProfile(state, profile)).toEqual([]);
    expect(validateProfile(empty, profile).map((i) => i.code)).toEqual(['STEP_UNKNOWN']);
    const misplaced = { ...profile, steps: [{ id: 'acme.render', runsOn: 'site' }] };
    expect(validateProfile(state, misplaced).map((i) => i.code)).toEqual(['RUNS_ON_MISMATCH']);
    const dangling = { ...profile, steps: [{ id: 'media.insert', runsOn: 'site', params: { imageUrl: { $fromStep: 'acme.render', field: 'url' } } }] };
    expect(validateProfile(state, dangling).map((i) => i.code)).toEqual(['FROM_STEP_UNKNOWN']);
    expect(validateProfile(state, { id: 'x' }).map((i) => i.code)).toEqual(['INVALID']);
    // The profile cannot make a destructive step look harmless; plugin steps carry their plugin into the workflow.
    const steps = resolveSteps({ ...profile, steps: [...profile.steps.slice(0, 1), { ...profile.steps[1]!, destructive: false }] }, {}, stepHomes(state));
    expect(steps.map((s) => [s.id, s.plugin, s.destructive])).toEqual([
      ['acme.render', 'acme', false],
      ['power.set', undefined, true],
    ]);
  });
});
