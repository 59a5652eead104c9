/**
 * libvirt: VPS instances as QEMU domains on a libvirt host (https://libvirt.org), as a third party would ship it: the
 * SDK and zod only, libvirt driven through `virsh` with the SDK's program runner. Run it with `better-compute plugin
 * run plugins/libvirt/index.ts` (or list it in `BC_PLUGINS`) on a host with libvirt-clients; the account's token
 * secret holds any string (a local socket's permissions are libvirt's credential) and the account says the rest:
 * `vps.createProviderAccount { providerId: 'libvirt', region: 'rack-1', config: { uri: 'qemu:///system', images: {...} } }`.
 */
import { definePlugin } from 'better-compute/sdk';
import { libvirtProvider } from './provider.ts';

export { libvirtProvider } from './provider.ts';
export { LibvirtConfig, LibvirtFlavour } from './config.ts';
export { METADATA_NAMESPACE, domainUuidOf } from './domainXml.ts';

export default definePlugin({ id: 'libvirt', version: '0.1.0', providers: [libvirtProvider] });
