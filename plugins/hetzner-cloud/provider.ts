/**
 * The Hetzner Cloud provider, written the way an outside package would: only the SDK, only `ctx.fetch`. Hetzner has
 * no client tokens, so idempotency rests on two documented features: a label (`bc-client-token`) found again with
 * `label_selector`, and server names being unique per project (`uniqueness_error`), the name derived from the token.
 */
import { createHash } from 'node:crypto';
import { ProviderError, defineProvider } from 'better-compute/sdk';
import type { ProviderInstance, ProviderInstanceSpec, ProviderInstanceState, ProviderOffer } from 'better-compute/sdk';
import { ActionAnswer, HetznerCloudConfig, ServerAnswer, ServerPage, ServerTypeList, errorCodeOf, hetznerApi, read } from './api.ts';
import type { HetznerServer, ServerPage as ServerPageAnswer } from './api.ts';
import { userDataWithKeys } from './cloudInit.ts';

/** The label that carries the platform's client token; its presence also marks the servers the platform made. */
export const CLIENT_TOKEN_LABEL = 'bc-client-token';
// Hetzner's label values: at most 63 characters, alphanumerics with `-_.` inside.
const LABEL_VALUE = /^[A-Za-z0-9]([-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?$/;

// Hetzner's transitional states are reported as the state the platform must still wait through: `starting` (after a
// create or a power-on) is not yet running, `stopping` still is, `migrating` runs throughout.
const stateOf: Record<string, ProviderInstanceState> = {
  initializing: 'provisioning',
  starting: 'provisioning',
  rebuilding: 'provisioning',
  running: 'running',
  stopping: 'running',
  migrating: 'running',
  off: 'stopped',
  deleting: 'deleting',
};

function toInstance(server: HetznerServer): ProviderInstance {
  const state = stateOf[server.status] ?? 'error';
  const instance: ProviderInstance = {
    providerInstanceId: String(server.id),
    // A server made outside the platform has no token; its id stands in so the instance still parses.
    clientToken: server.labels[CLIENT_TOKEN_LABEL] ?? `unlabelled-${server.id}`,
    state,
    addresses: server.public_net.ipv4 ? [server.public_net.ipv4.ip] : [],
  };
  return server.status === state ? instance : { ...instance, message: `hetzner status ${server.status}` };
}

function toOffer(type: { name: string; cores: number; memory: number; disk: number }): ProviderOffer {
  return { offerId: type.name, vcpus: type.cores, memoryMib: Math.round(type.memory * 1024), diskGib: type.disk };
}

/** The server name: the platform's name made a hostname, plus 8 hex of the token, so one token always names one server. */
function serverNameOf(spec: ProviderInstanceSpec): string {
  const base =
    spec.name
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 54) || 'bc';
  return `${base}-${createHash('sha256').update(spec.clientToken).digest('hex').slice(0, 8)}`;
}

const serverPath = (id: string): string => {
  if (!/^\d+$/.test(id)) throw new ProviderError('not-found', `Hetzner server ids are numbers; ${JSON.stringify(id.slice(0, 64))} is not one`);
  return `/servers/${id}`;
};

export const hetznerCloudProvider = defineProvider({
  id: 'hetzner-cloud',
  configSchema: HetznerCloudConfig,
  create(ctx) {
    const api = hetznerApi(ctx);
    const findByClientToken = async (clientToken: string): Promise<ProviderInstance | null> => {
      if (!LABEL_VALUE.test(clientToken)) return null;
      const selector = encodeURIComponent(`${CLIENT_TOKEN_LABEL}==${clientToken}`);
      const server = read(ServerPage, await api('GET', `/servers?label_selector=${selector}`)).servers[0];
      return server ? toInstance(server) : null;
    };
    const getInstance = async (id: string): Promise<ProviderInstance> => toInstance(read(ServerAnswer, await api('GET', serverPath(id))).server);
    const powerAction = async (id: string, action: 'poweron' | 'poweroff'): Promise<void> => {
      const { action: answer } = read(ActionAnswer, await api('POST', `${serverPath(id)}/actions/${action}`));
      if (answer.status === 'error') throw new ProviderError('rejected', `Hetzner action ${answer.command} ${answer.id} failed`);
    };
    return {
      async listOffers() {
        const { server_types: types } = read(ServerTypeList, await api('GET', '/server_types'));
        return types.filter((t) => t.deprecated !== true).map(toOffer);
      },
      async createInstance(spec) {
        if (!LABEL_VALUE.test(spec.clientToken))
          throw new ProviderError('rejected', 'the client token is not a valid Hetzner label value (63 alphanumerics, - _ . inside)');
        const existing = await findByClientToken(spec.clientToken);
        if (existing) return existing;
        const body = {
          name: serverNameOf(spec),
          server_type: spec.offerId,
          image: spec.image,
          location: ctx.config.region,
          start_after_create: true,
          labels: { [CLIENT_TOKEN_LABEL]: spec.clientToken },
          user_data: userDataWithKeys(spec.sshKeys, spec.userData),
        };
        try {
          return toInstance(read(ServerAnswer, await api('POST', '/servers', body)).server);
        } catch (error) {
          // The name is the token's: taken means an earlier try of this create (whose answer was lost) made it.
          if (errorCodeOf(error) !== 'uniqueness_error') throw error;
          const made = await findByClientToken(spec.clientToken);
          if (made) return made;
          throw error;
        }
      },
      getInstance,
      findByClientToken,
      startInstance: (id) => powerAction(id, 'poweron'),
      // A hard power-off, not `shutdown`: an ACPI shutdown the guest ignores would leave the server running for ever.
      stopInstance: (id) => powerAction(id, 'poweroff'),
      async deleteInstance(id) {
        try {
          if ((await getInstance(id)).state === 'deleting') return;
          await api('DELETE', serverPath(id));
        } catch (error) {
          if (error instanceof ProviderError && error.kind === 'not-found') return;
          throw error;
        }
      },
      async listInstances() {
        const instances: ProviderInstance[] = [];
        for (let page: number | null = 1; page !== null;) {
          const answer: ServerPageAnswer = read(ServerPage, await api('GET', `/servers?label_selector=${CLIENT_TOKEN_LABEL}&page=${page}`));
          instances.push(...answer.servers.map(toInstance));
          page = answer.meta.pagination.next_page;
        }
        return instances;
      },
    };
  },
});
