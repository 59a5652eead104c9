/**
 * proxmox-ve: VPS instances on a Proxmox VE cluster (https://pve.proxmox.com/pve-docs/api-viewer/), as a third party
 * would ship it: the SDK and zod only. Store an API token (`USER@REALM!TOKENID=SECRET`, with VM.Audit, Sys.Audit, VM.Clone, VM.Config.*,
 * VM.PowerMgmt, VM.Allocate, Datastore.AllocateSpace) with `PUT /v1/secrets/<id>`, and create an account with
 * `vps.createProviderAccount { providerId: 'proxmox-ve', region: <node>, config: { endpoint: 'https://<host>:8006/api2/json' } }`.
 * Images are templates on that node, named like the image (`debian-12`), with a cloud-init drive.
 */
import { definePlugin } from 'better-compute/sdk';
import { proxmoxVeProvider } from './provider.ts';

export { proxmoxVeProvider } from './provider.ts';
export { ProxmoxVeConfig } from './api.ts';

export default definePlugin({ id: 'proxmox-ve', version: '0.1.0', providers: [proxmoxVeProvider] });
