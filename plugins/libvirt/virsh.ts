/**
 * One `virsh` call and what its failures mean. virsh is libvirt's own client: every answer it gives is libvirt's,
 * and its exit status with the message on stderr is the whole error contract (virsh has no machine-readable error
 * codes), so the messages libvirt prints are matched here and nowhere else.
 */
import { ProviderError, withTransientRetry } from 'better-compute/sdk';
import type { ProviderContext } from 'better-compute/sdk';
import type { LibvirtConfig } from './config.ts';

// virsh's own lookup failures ("failed to get domain 'x'", "failed to get vol") and libvirt's VIR_ERR_NO_DOMAIN and
// VIR_ERR_NO_STORAGE_VOL ("Domain not found", "Storage volume not found").
const NOT_FOUND = /failed to get domain|Domain not found|failed to get vol|Storage volume not found/i;
// No daemon listens at the URI's socket, or it refuses us: an operator must act (start it, fix the uri or the rights).
const CONFIGURATION = /No such file or directory|Permission denied|authentication (failed|unavailable)|access denied|unsupported configuration/i;
// The daemon is there but the connection broke or it is restarting: worth trying again.
const TRANSIENT = /Connection refused|Connection reset|Cannot recv data|Cannot write data|End of file while reading|timed out|Broken pipe/i;

export type Virsh = (args: readonly string[], options?: { mutating?: boolean; input?: string | Uint8Array }) => Promise<string>;

/** The failure libvirt reported, without virsh's `error: ` prefixes, on one line, at most 300 characters. */
function messageOf(stderr: string): string {
  return stderr
    .split('\n')
    .map((line) => line.replace(/^error:\s*/, '').trim())
    .filter(Boolean)
    .join('; ')
    .slice(0, 300);
}

export function classifyVirshFailure(stderr: string): ProviderError {
  const message = `libvirt: ${messageOf(stderr) || 'virsh failed without a message'}`;
  if (NOT_FOUND.test(stderr)) return new ProviderError('not-found', message);
  if (CONFIGURATION.test(stderr)) return new ProviderError('configuration', message);
  if (TRANSIENT.test(stderr)) return new ProviderError('transient', message);
  return new ProviderError('rejected', message);
}

/**
 * A virsh bound to the account's connection (`--connect <uri>`, `--quiet`, read/write). Reads are retried while the
 * daemon is unreachable; a mutating call is sent once, because the caller's idempotency (the client token) decides
 * whether to send it again.
 */
export function virshFor(ctx: ProviderContext<LibvirtConfig>): Virsh {
  return async (args, options = {}) => {
    const once = async (): Promise<string> => {
      const command = { file: 'virsh', args: ['--quiet', '--connect', ctx.config.uri, ...args], input: options.input, mutating: options.mutating ?? false };
      const result = await ctx.run(command, ctx.signal).catch((error: unknown) => {
        if ((error as { code?: unknown }).code === 'ENOENT') throw new ProviderError('configuration', 'virsh is not installed on this host (libvirt-clients)');
        throw error;
      });
      if (result.exitCode !== 0) throw classifyVirshFailure(result.stderr);
      return result.stdout;
    };
    return options.mutating === true ? once() : withTransientRetry(once, { signal: ctx.signal });
  };
}
