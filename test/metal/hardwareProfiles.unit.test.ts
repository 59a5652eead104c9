import { describe, expect, it, vi } from 'vitest';
import { builtinHardwareProfiles, HardwareDrivers, HardwareProfile } from '../../schemas/metal/hardwareProfile.ts';
import { deployDriverOf } from '../../schemas/metal/nodeState.ts';
import type { PoolState } from '../../schemas/vps/poolState.ts';
import { definePlugin, registrationOf } from '../../plugins/sdk/definePlugin.ts';
import type { StepContext } from '../../plugins/sdk/defineStep.ts';
import { checkHardwareProfiles } from '../../scripts/cli/doctor/hardwareProfileCheck.ts';
import { configuredHardwareProfiles, hardwareProfileCatalog } from '../../schemas/metal/hardwareProfileCatalog.ts';
import { enrolmentProfile } from '../../services/metal/hardwareProfiles/enrolmentProfile.ts';
import { AGENTLESS_INPUT, builtinProfileFor } from '../../services/metal/profiles/builtin.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { builtinSteps } from '../../services/plugins/builtinSteps.ts';
import { pluginRegistryAggregate } from '../../services/plugins/registry/registry.ts';
import { registerPlugin } from '../../services/plugins/registry/register.ts';

const pxe = { power: 'redfish', management: 'redfish', boot: 'ipxe', deploy: 'image-stream' } as const;
const media = { power: 'redfish', management: 'redfish', boot: 'virtual-media', deploy: 'agentless' } as const;
const catalog = hardwareProfileCatalog([{ id: 'rack-pxe', description: '', drivers: pxe }], undefined);
const pool = (agent: 'none' | 'bcd', hardwareProfile?: string): PoolState => ({
  exists: true,
  poolId: 'p1',
  class: 'metal',
  agent,
  accountId: null,
  siteId: 'dc1',
  policy: { allowUnverifiedRelease: false, provisioningCidrs: [], ...(hardwareProfile ? { hardwareProfile } : {}) },
  offeredTo: [],
});
const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as DomainError).code;
  }
  return undefined;
};

describe('hardware profile validation', () => {
  it('takes only drivers the platform implements, and an image-stream deploy only with iPXE boot', () => {
    expect(HardwareDrivers.safeParse(pxe).success).toBe(true);
    expect(HardwareDrivers.safeParse(media).success).toBe(true);
    expect(HardwareDrivers.safeParse({ ...pxe, power: 'ipmi' }).success).toBe(false);
    expect(HardwareDrivers.safeParse({ ...pxe, deploy: 'pxe-magic' }).success).toBe(false);
    const noPxe = HardwareDrivers.safeParse({ ...pxe, boot: 'virtual-media' });
    expect(noPxe.success).toBe(false);
    expect(noPxe.error?.issues[0]?.path).toEqual(['boot']);
    expect(HardwareProfile.safeParse({ id: 'Bad Name', drivers: pxe }).success).toBe(false);
    expect(HardwareDrivers.safeParse({ power: 'redfish', management: 'redfish', boot: 'ipxe' }).success).toBe(false);
  });

  it('lists every bad config profile with its path, and refuses a built-in name', () => {
    const env = { BC_CONFIG: '' };
    const overrides = { hardwareProfiles: { default: { description: '', drivers: pxe }, 'x-1': { drivers: { ...pxe, boot: 'virtual-media' } } } } as never;
    let problems: { path: string }[] = [];
    try {
      loadConfig(env, overrides);
    } catch (err) {
      problems = (err as { problems: { path: string }[] }).problems;
    }
    expect(problems.map((p) => p.path).sort()).toEqual(['hardwareProfiles.default', 'hardwareProfiles.x-1.drivers.boot']);
    const ok = loadConfig(env, { hardwareProfiles: { 'rack-pxe': { description: 'r', drivers: pxe } } });
    expect(configuredHardwareProfiles(ok.hardwareProfiles)).toEqual([{ id: 'rack-pxe', description: 'r', drivers: pxe }]);
  });

  it('registers a plugin’s profiles; a built-in name or another plugin’s is refused with ALREADY_EXISTS', () => {
    const decide = (state: typeof pluginRegistryAggregate.initialState, pluginId: string, id: string) =>
      registerPlugin.decide(
        registerPlugin.schema.parse(
          registrationOf(definePlugin({ id: pluginId, version: '1.0.0', steps: [], hardwareProfiles: [{ id, description: '', drivers: media }] })),
        ),
        state,
        { commandId: 'c1', actor: 't', now: 'now', dependencies: undefined },
      );
    const events = decide(pluginRegistryAggregate.initialState, 'acme', 'acme-tower');
    const registry = events.reduce(pluginRegistryAggregate.evolve, pluginRegistryAggregate.initialState);
    expect(hardwareProfileCatalog([], registry).find((p) => p.id === 'acme-tower')).toMatchObject({ source: 'plugin:acme', drivers: media });
    expect(codeOf(() => decide(registry, 'other', 'acme-tower'))).toBe('ALREADY_EXISTS');
    expect(codeOf(() => decide(pluginRegistryAggregate.initialState, 'other', 'default'))).toBe('ALREADY_EXISTS');
    // A plugin declaring none registers exactly as before profiles existed.
    expect(registrationOf(definePlugin({ id: 'plain', version: '1.0.0', steps: [] }))).not.toHaveProperty('hardwareProfiles');
  });
});

describe('driver selection', () => {
  it('enrols with the named profile, else the pool’s, else the built-in default; unknown and mismatched are refused', () => {
    expect(enrolmentProfile('rack-pxe', undefined, catalog)).toEqual({ id: 'rack-pxe', drivers: pxe, agent: undefined });
    expect(enrolmentProfile(undefined, pool('bcd', 'rack-pxe'), catalog)).toMatchObject({ id: 'rack-pxe', agent: 'bcd' });
    expect(enrolmentProfile(undefined, undefined, catalog)).toMatchObject({ id: 'default', drivers: builtinHardwareProfiles[0]!.drivers });
    expect(codeOf(() => enrolmentProfile('nope', undefined, catalog))).toBe('HARDWARE_PROFILE_UNKNOWN');
    expect(codeOf(() => enrolmentProfile(undefined, pool('bcd', 'gone'), catalog))).toBe('HARDWARE_PROFILE_UNKNOWN');
    expect(codeOf(() => enrolmentProfile('default', pool('bcd', 'rack-pxe'), catalog))).toBe('HARDWARE_PROFILE_MISMATCH');
  });

  it('an agentless deploy driver makes an agentless node; an agentless pool makes any profile deploy agentless; never the reverse', () => {
    expect(enrolmentProfile('agentless', undefined, catalog)).toMatchObject({ agent: 'none', drivers: { deploy: 'agentless' } });
    expect(enrolmentProfile('rack-pxe', pool('none'), catalog)).toMatchObject({ agent: 'none', drivers: { deploy: 'agentless', boot: 'ipxe' } });
    expect(codeOf(() => enrolmentProfile('agentless', pool('bcd'), catalog))).toBe('HARDWARE_PROFILE_MISMATCH');
  });

  it('the recorded agent is the deploy driver, and it picks the built-in release (an enrolment without one streams images)', () => {
    expect(deployDriverOf({})).toBe('image-stream');
    expect(deployDriverOf({ agent: 'bcd' })).toBe('image-stream');
    expect(deployDriverOf({ agent: 'none' })).toBe('agentless');
    expect(builtinProfileFor('release', { [AGENTLESS_INPUT]: true }).steps.map((s) => s.id)).toEqual(['media.eject', 'power.set']);
    expect(builtinProfileFor('release', {}).steps.map((s) => s.id)).toContain('disk.wipe');
  });

  it('a built-in ramdisk step refuses a node that deploys agentless before sending anything', async () => {
    const runAgentCommand = vi.fn(async () => ({ payload: {}, agentId: 'a' }));
    const ctx = (deployDriver: 'agentless' | 'image-stream') =>
      ({
        input: { device: '/dev/sda' },
        node: { nodeId: 'n1', siteId: 'dc1', hardwareProfile: 'rack', deployDriver, macs: [], addresses: [], productUuid: null, poolId: null },
        workflow: { workflowId: 'wf', operation: 'release', stepIndex: 0, attempt: 1, startedAt: '', restartedAt: null },
        platform: { runAgentCommand },
      }) as unknown as StepContext<Record<string, unknown>>;
    await expect(builtinSteps.get('disk.wipe')!.run(ctx('agentless'))).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    await expect(builtinSteps.get('wait.agentJoined')!.run({ ...ctx('agentless'), input: { role: 'ramdisk' } })).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    expect(runAgentCommand).not.toHaveBeenCalled();
    await builtinSteps.get('disk.wipe')!.run(ctx('image-stream'));
    expect(runAgentCommand).toHaveBeenCalledOnce();
  });
});

describe('the doctor', () => {
  it('reports a pool (error) and nodes (warning) naming a profile nobody declares', () => {
    const config = loadConfig({ BC_CONFIG: '' }, { hardwareProfiles: { 'rack-pxe': { description: '', drivers: pxe } } });
    const pools = [
      { poolId: 'p1', policy: { hardwareProfile: 'gone' } },
      { poolId: 'p2', policy: { hardwareProfile: 'rack-pxe' } },
    ];
    const nodes = [
      { nodeId: 'n1', hardwareProfile: 'dl325' },
      { nodeId: 'n2', hardwareProfile: 'dl325' },
      { nodeId: 'n3', hardwareProfile: 'default' },
    ];
    const findings = checkHardwareProfiles(config, { pools, nodes, plugins: [] } as never);
    expect(findings.map((f) => [f.code, f.severity, f.detail])).toEqual([
      ['HARDWARE_PROFILE_UNKNOWN', 'error', { poolId: 'p1', hardwareProfile: 'gone' }],
      ['HARDWARE_PROFILE_UNKNOWN', 'warning', { hardwareProfile: 'dl325', nodes: ['n1', 'n2'] }],
    ]);
    expect(checkHardwareProfiles(config, { pools: pools.slice(1), nodes: nodes.slice(2), plugins: [] } as never).map((f) => f.code)).toEqual([
      'HARDWARE_PROFILES_OK',
    ]);
  });
});
