/**
 * The Acme Cloud provider plugin, written the way an outside package would: only the SDK, only `ctx.fetch`. Acme's
 * wire shapes keep Acme's snake_case spelling and are mapped to the SDK's shapes in `toInstance`/`toOffer` alone.
 */
import { z } from 'zod';
import { ProviderError, callProviderApi, defineProvider, readAnswer } from 'better-compute/sdk';
import type { ProviderContext, ProviderInstance, ProviderInstanceState, ProviderOffer } from 'better-compute/sdk';

const AcmeServer = z.object({
  id: z.string(),
  client_token: z.string(),
  status: z.string(),
  ipv4: z.array(z.string()),
});
type AcmeServer = z.infer<typeof AcmeServer>;

const AcmeOffer = z.object({ id: z.string(), vcpus: z.number().int(), memory_mb: z.number().int(), disk_gb: z.number().int() });
const ServerAnswer = z.object({ server: AcmeServer });
const ServerPage = z.object({ servers: z.array(AcmeServer), next_page_token: z.string().nullable() });
const OfferList = z.object({ offers: z.array(AcmeOffer) });

/** An answer in a shape the plugin does not know is Acme's API changing under us: not worth retrying. */
const read = <T>(schema: z.ZodType<T>, answer: unknown): T => readAnswer('Acme', schema, answer);

// Acme's transitional power states are reported as the state the instance is still in: the platform waits for the
// target state anyway, and `message` keeps Acme's own word.
const stateOf: Record<string, ProviderInstanceState> = {
  provisioning: 'provisioning',
  running: 'running',
  stopping: 'running',
  stopped: 'stopped',
  starting: 'stopped',
  deleting: 'deleting',
};

function toInstance(server: AcmeServer): ProviderInstance {
  const state = stateOf[server.status] ?? 'error';
  const instance: ProviderInstance = { providerInstanceId: server.id, clientToken: server.client_token, state, addresses: server.ipv4 };
  return server.status === state ? instance : { ...instance, message: `acme status ${server.status}` };
}

function toOffer(offer: z.infer<typeof AcmeOffer>): ProviderOffer {
  return { offerId: offer.id, vcpus: offer.vcpus, memoryMib: offer.memory_mb, diskGib: offer.disk_gb };
}

/** An Acme Cloud account: the API endpoint and the region servers are created in. */
export const AcmeCloudConfig = z.object({ endpoint: z.url({ protocol: /^https?$/ }), region: z.string().min(1) });
export type AcmeCloudConfig = z.infer<typeof AcmeCloudConfig>;

export const acmeCloudProvider = defineProvider({
  id: 'acme-cloud',
  configSchema: AcmeCloudConfig,
  create(ctx) {
    const api = acmeApi(ctx);
    const findByClientToken = async (clientToken: string): Promise<ProviderInstance | null> => {
      const page = read(ServerPage, await api('GET', `/v1/servers?client_token=${encodeURIComponent(clientToken)}`));
      const server = page.servers[0];
      return server ? toInstance(server) : null;
    };
    return {
      async listOffers() {
        return read(OfferList, await api('GET', '/v1/offers')).offers.map(toOffer);
      },
      async createInstance(spec) {
        // Safe to retry: Acme answers a repeated client_token with the server the first request created.
        const body = {
          name: spec.name,
          offer: spec.offerId,
          image: spec.image,
          region: ctx.config.region,
          ssh_keys: spec.sshKeys,
          user_data: spec.userData ?? null,
          client_token: spec.clientToken,
        };
        return toInstance(read(ServerAnswer, await api('POST', '/v1/servers', body)).server);
      },
      async getInstance(id) {
        return toInstance(read(ServerAnswer, await api('GET', serverPath(id))).server);
      },
      findByClientToken,
      async startInstance(id) {
        await api('POST', `${serverPath(id)}/actions/start`);
      },
      async stopInstance(id) {
        await api('POST', `${serverPath(id)}/actions/stop`);
      },
      async deleteInstance(id) {
        try {
          await api('DELETE', serverPath(id));
        } catch (error) {
          if (error instanceof ProviderError && error.kind === 'not-found') return;
          throw error;
        }
      },
      async listInstances() {
        const instances: ProviderInstance[] = [];
        let pageToken: string | null = null;
        do {
          const query: string = pageToken === null ? '' : `?page_token=${encodeURIComponent(pageToken)}`;
          const page = read(ServerPage, await api('GET', `/v1/servers${query}`));
          instances.push(...page.servers.map(toInstance));
          pageToken = page.next_page_token;
        } while (pageToken !== null);
        return instances;
      },
    };
  },
});

function serverPath(id: string): string {
  return `/v1/servers/${encodeURIComponent(id)}`;
}

/** One Acme API call with transient retries; every call of the plugin is safe to repeat. Resolves the parsed body. */
function acmeApi(ctx: ProviderContext<AcmeCloudConfig>) {
  const base = ctx.config.endpoint.replace(/\/+$/, '');
  return (method: string, path: string, body?: unknown): Promise<unknown> =>
    callProviderApi(ctx, {
      method,
      url: `${base}${path}`,
      headers: {
        authorization: `Bearer ${ctx.token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}
