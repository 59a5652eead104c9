import { closeSync, constants, openSync } from 'node:fs';
import { VmAccel } from '../../daemon/simulator/vm/qemuArgs.ts';

export class EmulatedAccelError extends Error {
  override name = 'EmulatedAccelError';
  constructor(
    readonly code: 'EMULATED_ACCEL_INVALID' | 'KVM_UNAVAILABLE',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/**
 * The emulated site's accelerator: `--accel`, else `BC_EMULATED_ACCEL`, else TCG (a Linux guest hung at kernel start
 * under KVM on the hosts this was built on, so TCG stays the default). KVM is checked here, before any VM starts:
 * /dev/kvm must exist and open read-write, else `KVM_UNAVAILABLE` says why. Whether a guest then boots under KVM is
 * up to the host; a guest that hangs shows in its serial log.
 */
export function emulatedAccel(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, kvmDevice = '/dev/kvm'): VmAccel {
  const wanted = flag ?? env.BC_EMULATED_ACCEL ?? 'tcg';
  if (!(VmAccel as readonly string[]).includes(wanted)) {
    throw new EmulatedAccelError('EMULATED_ACCEL_INVALID', `accelerator ${JSON.stringify(wanted)} is not one of ${VmAccel.join(', ')}`);
  }
  if (wanted === 'kvm') {
    try {
      closeSync(openSync(kvmDevice, constants.O_RDWR));
    } catch (err) {
      throw new EmulatedAccelError(
        'KVM_UNAVAILABLE',
        `KVM was asked for but ${kvmDevice} cannot be opened read-write (${(err as NodeJS.ErrnoException).code}): run without it (TCG)`,
        {
          cause: err,
        },
      );
    }
  }
  return wanted as VmAccel;
}
