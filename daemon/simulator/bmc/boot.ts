import { BaseMessages, badValue, redfishError, success, type SimResponse } from './responses.ts';
import type { BmcQuirks } from './quirks.ts';
import { isPlainObject, touch, type Json } from './treeStore.ts';

// Used only when the tree does not list BootSourceOverrideTarget@Redfish.AllowableValues.
const standardTargets = [
  'None',
  'Pxe',
  'Floppy',
  'Cd',
  'Usb',
  'Hdd',
  'BiosSetup',
  'Utilities',
  'Diags',
  'UefiShell',
  'UefiTarget',
  'SDCard',
  'UefiHttp',
  'RemoteDrive',
  'UefiBootNext',
  'Recovery',
];
const enabledValues = ['Once', 'Continuous', 'Disabled'];
const modeValues = ['UEFI', 'Legacy'];
const writableSystemProps = new Set(['Boot', 'AssetTag', 'IndicatorLED', 'LocationIndicatorActive']);
const writableBootProps = new Set([
  'BootSourceOverrideTarget',
  'BootSourceOverrideEnabled',
  'BootSourceOverrideMode',
  'UefiTargetBootSourceOverride',
  'BootOrder',
]);

const notWritable = (name: string): SimResponse =>
  redfishError(400, BaseMessages.PropertyNotWritable, `The property ${name} is a read only property and cannot be assigned a value.`);

function allowed(boot: Json, property: string, fallback: readonly string[] | undefined): readonly string[] | undefined {
  const inline = boot[`${property}@Redfish.AllowableValues`];
  return Array.isArray(inline) ? (inline as string[]) : fallback;
}

/**
 * PATCH of the ComputerSystem: the boot override plus the few identity fields BMCs let a client write. `quirks` shape
 * how the override is taken: read back `Continuous` for `Once`, ignored, or its mode not writable.
 */
export function patchSystem(system: Json, body: Json, quirks: Pick<BmcQuirks, 'bootOverride' | 'bootMode'>): SimResponse {
  for (const name of Object.keys(body)) if (!writableSystemProps.has(name)) return notWritable(name);
  const patchBoot = body.Boot;
  if (patchBoot !== undefined && !isPlainObject(patchBoot)) return badValue('Boot', patchBoot);
  const boot = isPlainObject(system.Boot) ? system.Boot : {};
  if (patchBoot) {
    for (const name of Object.keys(patchBoot)) if (!writableBootProps.has(name)) return notWritable(`Boot/${name}`);
    if (quirks.bootMode === 'readOnly' && 'BootSourceOverrideMode' in patchBoot) return notWritable('Boot/BootSourceOverrideMode');
    const checks: [string, readonly string[] | undefined][] = [
      ['BootSourceOverrideTarget', allowed(boot, 'BootSourceOverrideTarget', standardTargets)],
      ['BootSourceOverrideEnabled', enabledValues],
      ['BootSourceOverrideMode', allowed(boot, 'BootSourceOverrideMode', modeValues)],
      ['UefiTargetBootSourceOverride', allowed(boot, 'UefiTargetBootSourceOverride', undefined)],
    ];
    for (const [name, values] of checks) {
      const value = patchBoot[name];
      if (value !== undefined && values !== undefined && !values.includes(value as string)) return badValue(`Boot/${name}`, value);
    }
  }
  for (const [name, value] of Object.entries(body)) if (name !== 'Boot') system[name] = value;
  if (patchBoot && quirks.bootOverride !== 'ignored') {
    const sticky = quirks.bootOverride === 'continuous' && patchBoot.BootSourceOverrideEnabled === 'Once';
    system.Boot = { ...boot, ...patchBoot, ...(sticky ? { BootSourceOverrideEnabled: 'Continuous' } : {}) };
  }
  touch(system);
  return success();
}

/**
 * The boot source the host uses on this power-on: the override when one is armed, else the normal boot order
 * ('None'). A `Once` override is spent by this boot, as DSP0268 specifies.
 */
export function consumeBootOverride(system: Json): string {
  const boot = isPlainObject(system.Boot) ? system.Boot : undefined;
  if (!boot) return 'None';
  const enabled = boot.BootSourceOverrideEnabled;
  const target = typeof boot.BootSourceOverrideTarget === 'string' ? boot.BootSourceOverrideTarget : 'None';
  if (enabled !== 'Once' && enabled !== 'Continuous') return 'None';
  if (enabled === 'Once') {
    boot.BootSourceOverrideEnabled = 'Disabled';
    touch(system);
  }
  return target;
}
