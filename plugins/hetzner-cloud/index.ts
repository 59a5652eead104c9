/**
 * hetzner-cloud: VPS instances on Hetzner Cloud (https://docs.hetzner.cloud/reference/cloud), as a third party would
 * ship it: the SDK and zod only. Run it with `better-compute plugin run plugins/hetzner-cloud/index.ts` (or list it in
 * `BC_PLUGINS`), store the project's API token with `PUT /v1/secrets/<id>` and create an account with
 * `vps.createProviderAccount { providerId: 'hetzner-cloud', region: 'fsn1', config: {} }`.
 */
import { definePlugin } from 'better-compute/sdk';
import { hetznerCloudProvider } from './provider.ts';

export { hetznerCloudProvider, CLIENT_TOKEN_LABEL } from './provider.ts';
export { HetznerCloudConfig } from './api.ts';

export default definePlugin({ id: 'hetzner-cloud', version: '0.1.0', providers: [hetznerCloudProvider] });
