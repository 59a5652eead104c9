import { execFile } from 'node:child_process';
import { chmod, rename, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What cloud-init's NoCloud datasource reads at the VM's first boot. */
export interface SeedInput {
  readonly instanceId: string;
  readonly hostname: string;
  readonly sshKeys: readonly string[];
  /** The tenant's user data, unchanged (any format cloud-init reads); none is an empty cloud-config. */
  readonly userData?: string;
}

/** 2 MiB of FAT12: room for the user data `bcd node` passes (the instance spec's own limit is far below it). */
const SEED_KIB = 2048;

/**
 * The NoCloud seed as a small vfat disk labelled CIDATA (dosfstools' `mkfs.fat`, mtools' `mcopy`), the form the
 * project's image reads: it carries the vfat modules, not isofs. Written beside the VM's disk (0600) and renamed into
 * place, so a plugin killed mid-write leaves the previous seed or none. The seed stays as long as the VM: cloud-init
 * reads it at every boot to know its instance has not changed.
 */
export async function writeCidataSeed(seedFile: string, input: SeedInput): Promise<void> {
  const metaData = [
    `instance-id: ${JSON.stringify(input.instanceId)}`,
    `local-hostname: ${JSON.stringify(input.hostname)}`,
    ...(input.sshKeys.length > 0 ? ['public-keys:', ...input.sshKeys.map((key) => `  - ${JSON.stringify(key)}`)] : []),
    '',
  ].join('\n');
  const temp = `${seedFile}.tmp`;
  const staged = { 'meta-data': `${seedFile}.meta-data`, 'user-data': `${seedFile}.user-data` };
  try {
    await rm(temp, { force: true });
    await writeFile(staged['meta-data'], metaData, { mode: 0o600 });
    await writeFile(staged['user-data'], input.userData ?? '#cloud-config\n', { mode: 0o600 });
    await run('mkfs.fat', ['-C', '-n', 'CIDATA', temp, String(SEED_KIB)]);
    const env = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
    for (const [name, file] of Object.entries(staged)) await run('mcopy', ['-i', temp, file, `::${name}`], { env });
    await chmod(temp, 0o600);
    await rename(temp, seedFile);
  } finally {
    await Promise.all([temp, ...Object.values(staged)].map((f) => rm(f, { force: true })));
  }
}
