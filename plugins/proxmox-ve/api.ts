/**
 * One call to the Proxmox VE API (https://pve.proxmox.com/pve-docs/api-viewer/, `/api2/json`) and what its answers
 * mean. Every answer is `{ "data": ... }`; a failure's message is the status line's reason phrase (a 400's parameter
 * errors also come as `errors`), and a missing VM is a 500 whose message says its configuration file does not exist.
 */
import { z } from 'zod';
import { ProviderError, callProviderApi, readAnswer } from 'better-compute/sdk';
import type { ProviderContext } from 'better-compute/sdk';

/** A Proxmox VE account: the API base URL (`https://<host>:8006/api2/json`) and the node VMs are created on. */
export const ProxmoxVeConfig = z.object({
  endpoint: z.url({ protocol: /^https?$/ }),
  /** The cluster node (`GET /nodes`) new VMs are cloned on. */
  region: z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$/, 'a Proxmox VE node name, e.g. pve1'),
});
export type ProxmoxVeConfig = z.infer<typeof ProxmoxVeConfig>;

/** A VM as `GET /nodes/{node}/qemu` lists it and `.../status/current` shows it; only the fields the plugin reads. */
export const PveVm = z.object({
  vmid: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]),
  name: z.string().optional(),
  status: z.string(),
  lock: z.string().optional(),
  tags: z.string().optional(),
  template: z.union([z.literal(1), z.literal(0), z.literal('1'), z.literal('0')]).optional(),
});
export type PveVm = z.infer<typeof PveVm>;

export const Data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });

/** An answer in a shape the plugin does not know is the API changing under us: not worth retrying. */
export const read = <T>(schema: z.ZodType<T>, answer: unknown): T => readAnswer('Proxmox VE', schema, answer);

/**
 * Maps a failed answer. Proxmox VE answers most refusals with 500 and a message, so the message decides: a missing
 * configuration file is not-found, a held lock (`VM is locked`, `can't lock file ... got timeout`) goes away on its
 * own; any other 500 is a refusal that retrying will not change. 401/403 are the token; other 5xx (pveproxy or a node
 * unreachable, 595/596) are transient.
 */
export function classifyPveFailure(status: number, statusText: string, bodyText: string): ProviderError {
  const message = `HTTP ${status}: ${statusText.replace(/\s+/g, ' ').trim().slice(0, 200)}`;
  if (status === 401 || status === 403) return new ProviderError('configuration', message, { status });
  if (status === 400) return new ProviderError('rejected', `${message} ${bodyText.slice(0, 200)}`.trim(), { status });
  if (status === 500 && /does not exist/.test(statusText)) return new ProviderError('not-found', message, { status });
  if (status === 500 && !/is locked|can't lock file|got timeout/.test(statusText)) return new ProviderError('rejected', message, { status });
  if (status >= 500 || status === 429) return new ProviderError('transient', message, { status });
  return new ProviderError(status === 404 ? 'not-found' : 'rejected', message, { status });
}

/** One API call with transient retries; resolves the parsed answer (`{ data }`). Parameters go form-encoded. */
export function pveApi(ctx: ProviderContext<ProxmoxVeConfig>) {
  const base = ctx.config.endpoint.replace(/\/+$/, '');
  return (method: string, path: string, params?: Record<string, string | number>): Promise<unknown> => {
    const body = params === undefined ? undefined : new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return callProviderApi(
      ctx,
      {
        method,
        url: `${base}${path}`,
        headers: {
          // An API token (`USER@REALM!TOKENID=SECRET`) needs no ticket and no CSRF header.
          authorization: `PVEAPIToken=${ctx.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(body === undefined ? {} : { body }),
      },
      (response, text) => classifyPveFailure(response.status, response.statusText, text),
    );
  };
}
