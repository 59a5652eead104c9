/** Where the ramdisk kernel and initrd come from; default: the site agent's own `/ramdisk/` paths. */
export interface RamdiskArtefacts {
  kernelUrl?: string;
  initrdUrl?: string;
}

/**
 * The iPXE script that boots a machine into `bcd ramdisk`. The kernel command line carries what the ramdisk needs
 * to find its control plane (`bc.site`, `bc.node`, `bc.nats`) and, when the site joins machines with tokens, the
 * single-use join token of this boot (`bc.join`); it is per machine, which is why the URL is secret.
 */
export function ramdiskIpxeScript(input: {
  siteId: string;
  nodeId: string;
  natsUrl: string;
  baseUrl: string;
  artefacts?: RamdiskArtefacts;
  /** The single-use join token minted for this boot (`bc.join`); unset: the ramdisk registers without one. */
  joinToken?: string;
  /** Broker mode: where the public join credential is served (`bc.joincreds`). */
  joinCredsUrl?: string;
  /** More kernel arguments the site adds for every machine (`bcd site --ramdisk-args`), e.g. `console=ttyS0`. */
  extraArgs?: readonly string[];
}): string {
  const kernel = input.artefacts?.kernelUrl ?? `${input.baseUrl}/ramdisk/vmlinuz`;
  const initrd = input.artefacts?.initrdUrl ?? `${input.baseUrl}/ramdisk/initrd.img`;
  return [
    '#!ipxe',
    `# Better Compute ramdisk for node ${input.nodeId} of site ${input.siteId}`,
    [
      `kernel ${kernel} initrd=initrd.img bc.site=${input.siteId} bc.node=${input.nodeId} bc.nats=${input.natsUrl} bc.boot=${input.baseUrl}`,
      ...(input.joinToken ? [`bc.join=${input.joinToken}`] : []),
      ...(input.joinCredsUrl ? [`bc.joincreds=${input.joinCredsUrl}`] : []),
      ...(input.extraArgs ?? []),
    ].join(' '),
    `initrd ${initrd}`,
    'boot',
    '',
  ].join('\n');
}

/**
 * The first stage, embedded in the iPXE build (or its firmware): it asks DHCP for the machine's boot file (the
 * per-machine script URL the site hands out, `${filename}`) and chainloads it. iPXE itself waits out a 503 with
 * `Retry-After` (the site cannot mint the boot's join token yet); anything else that fails (the site agent down or
 * restarting, a refusal) is tried again every `retrySeconds`, up to `maxTries` times, before the machine leaves
 * network boot for its next boot device.
 */
export function firstStageIpxeScript(options: { retrySeconds?: number; maxTries?: number } = {}): string {
  const retrySeconds = options.retrySeconds ?? 5;
  const maxTries = options.maxTries ?? 60;
  return [
    '#!ipxe',
    '# Better Compute first stage: embed in iPXE (make bin-x86_64-efi/ipxe.efi EMBED=first-stage.ipxe)',
    'set tries:int32 0',
    ':boot',
    'dhcp || goto again',
    'chain --autofree ${filename} || goto again',
    ':again',
    'inc tries',
    `iseq \${tries} ${maxTries} && goto give_up ||`,
    `echo Boot script unavailable; trying again in ${retrySeconds} s (\${tries}/${maxTries})`,
    `sleep ${retrySeconds}`,
    'goto boot',
    ':give_up',
    `echo No boot script after ${maxTries} tries; leaving network boot`,
    'exit 1',
    '',
  ].join('\n');
}

/** Reads the `bc.*` parameters back from a script's kernel line (what the ramdisk's init does with /proc/cmdline). */
export function ramdiskParamsOf(script: string): Record<string, string> {
  const kernel = script.split('\n').find((line) => line.startsWith('kernel '));
  const params: Record<string, string> = {};
  for (const word of kernel?.split(/\s+/) ?? []) {
    const eq = word.indexOf('=');
    if (word.startsWith('bc.') && eq > 0) params[word.slice(3, eq)] = word.slice(eq + 1);
  }
  return params;
}
