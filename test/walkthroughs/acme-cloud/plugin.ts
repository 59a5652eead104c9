/**
 * The Acme Cloud plugin as a deployment names it (`BC_PLUGINS=test/walkthroughs/acme-cloud/plugin.ts`): the provider,
 * bundled the way an outside package would ship it, with nothing but the SDK.
 */
import { definePlugin } from 'better-compute/sdk';
import { acmeCloudProvider } from './provider.ts';

export default definePlugin({ id: 'acme-cloud', version: '0.1.0', providers: [acmeCloudProvider] });
