import { parseArgs } from 'node:util';

/** The runtime's configuration, from the arguments its pin gives it (`bcx-plugin.json` `args`). */
export interface MicroVmConfig {
  /** Where images live: an instance's `image.ref` names a file in this folder (raw or qcow2). */
  readonly imagesDir: string;
  /**
   * QEMU's accelerator. Default `tcg`, which works anywhere. `kvm` needs /dev/kvm, which the sandbox's private /dev
   * does not have: a runtime run with KVM must be on the daemon's privileged list.
   */
  readonly accel: 'tcg' | 'kvm';
  /** Guest TCP ports each VM gets a host port on 127.0.0.1 for (user-mode network's `hostfwd`). Default 22. */
  readonly guestPorts: readonly number[];
  /** How long a stop waits for the guest to power off after the ACPI power button before QEMU is told to quit. */
  readonly stopGraceMs: number;
  /**
   * Text the guest prints on its serial console once it has booted (for the project's image, `bc-host: host /sbin/init
   * started`): an apply that starts the VM answers only when this boot printed it, and fails the instance when it did
   * not within `readyTimeoutMs`. None: the VM counts as running once QEMU runs it.
   */
  readonly readyWhen?: string;
  readonly readyTimeoutMs: number;
  readonly qemu: string;
  readonly qemuImg: string;
}

export class MicroVmConfigError extends Error {
  override name = 'MicroVmConfigError';
  readonly code = 'MICROVM_CONFIG_INVALID';
}

const port = (text: string): number => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 65_535) throw new MicroVmConfigError(`--guest-port ${text} is not a TCP port`);
  return value;
};

/** Node's argument parser, its refusals (an unknown flag, a value that looks like a flag) said as this runtime's. */
function parsed(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        images: { type: 'string' },
        accel: { type: 'string', default: 'tcg' },
        'guest-port': { type: 'string', multiple: true },
        'stop-grace-ms': { type: 'string', default: '20000' },
        'ready-when': { type: 'string' },
        'ready-timeout-ms': { type: 'string', default: '180000' },
        qemu: { type: 'string', default: 'qemu-system-x86_64' },
        'qemu-img': { type: 'string', default: 'qemu-img' },
      },
    });
  } catch (cause) {
    throw new MicroVmConfigError(`the plugin's arguments: ${(cause as Error).message}`, { cause });
  }
}

/**
 * `--images <dir> [--accel tcg|kvm] [--guest-port <n>]... [--stop-grace-ms <ms>] [--ready-when <text>]
 * [--ready-timeout-ms <ms>] [--qemu <path>] [--qemu-img <path>]`.
 */
export function microVmConfig(argv: readonly string[]): MicroVmConfig {
  const { values } = parsed(argv);
  if (!values.images) throw new MicroVmConfigError('--images <dir> is required: the folder image refs name files in');
  if (values.accel !== 'tcg' && values.accel !== 'kvm') throw new MicroVmConfigError(`--accel ${values.accel} is not tcg or kvm`);
  const stopGraceMs = Number(values['stop-grace-ms']);
  const readyTimeoutMs = Number(values['ready-timeout-ms']);
  for (const [flag, ms] of [
    ['--stop-grace-ms', stopGraceMs],
    ['--ready-timeout-ms', readyTimeoutMs],
  ] as const) {
    if (!Number.isInteger(ms) || ms < 0) throw new MicroVmConfigError(`${flag} ${ms} is not a duration in milliseconds`);
  }
  return {
    imagesDir: values.images,
    accel: values.accel,
    guestPorts: (values['guest-port'] ?? ['22']).map(port),
    stopGraceMs,
    ...(values['ready-when'] ? { readyWhen: values['ready-when'] } : {}),
    readyTimeoutMs,
    qemu: values.qemu,
    qemuImg: values['qemu-img'],
  };
}
