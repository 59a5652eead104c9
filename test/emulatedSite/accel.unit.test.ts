import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emulatedAccel } from '../../scripts/emulatedSite/accel.ts';
import { thrownCode } from '../support/thrownCode.ts';

const dir = mkdtempSync(join(tmpdir(), 'accel-'));
const openable = join(dir, 'kvm');
writeFileSync(openable, '');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('emulated site accelerator', () => {
  it('stays TCG unless --accel or BC_EMULATED_ACCEL asks for KVM', () => {
    expect(emulatedAccel(undefined, {})).toBe('tcg');
    expect(emulatedAccel(undefined, { BC_EMULATED_ACCEL: 'kvm' }, openable)).toBe('kvm');
    expect(emulatedAccel('tcg', { BC_EMULATED_ACCEL: 'kvm' }, openable)).toBe('tcg');
  });

  it('refuses KVM with KVM_UNAVAILABLE when the device cannot be opened read-write', () => {
    expect(thrownCode(() => emulatedAccel('kvm', {}, join(dir, 'missing')))).toBe('KVM_UNAVAILABLE');
  });

  it('refuses an unknown accelerator with EMULATED_ACCEL_INVALID', () => {
    expect(thrownCode(() => emulatedAccel('hvf', {}))).toBe('EMULATED_ACCEL_INVALID');
  });
});
