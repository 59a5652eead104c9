/**
 * The Proxmox VE provider, written the way an outside package would: only the SDK, only `ctx.fetch`. A VM is a full
 * clone of a template named like the image (`debian-12`), named with the client token: VM names are what the plugin
 * finds a create again by, so the token must be a DNS label (the platform's `bc-<32 hex>` always is). Creating takes
 * several requests (clone, then configure, resize and start once the clone's lock is gone), and each later try of
 * the same create carries on from where the last one stopped; a VM is finished once it has the `bc-ready` tag.
 */
import { ProviderError, defineProvider } from 'better-compute/sdk';
import type { ProviderContext, ProviderInstance, ProviderInstanceSpec, ProviderInstanceState, ProviderOffer } from 'better-compute/sdk';
import { z } from 'zod';
import { Data, PveVm, ProxmoxVeConfig, pveApi, read } from './api.ts';

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const READY_TAG = 'bc-ready';
// Proxmox VE has no catalogue of sizes: these are the plugin's own, applied as cores, memory and disk size, and
// offered when the node has that many CPUs and that much memory.
const offers: ProviderOffer[] = [
  { offerId: 'pve-1c-1g', vcpus: 1, memoryMib: 1024, diskGib: 20 },
  { offerId: 'pve-2c-4g', vcpus: 2, memoryMib: 4096, diskGib: 40 },
  { offerId: 'pve-4c-8g', vcpus: 4, memoryMib: 8192, diskGib: 80 },
];

const tagsOf = (vm: PveVm): string[] => (vm.tags ?? '').split(/[;, ]/).filter(Boolean);

function stateOf(vm: PveVm): ProviderInstanceState {
  if (vm.lock === 'destroyed') return 'deleting';
  if (vm.lock !== undefined) return 'provisioning';
  if (vm.status === 'running') return 'running';
  return tagsOf(vm).includes(READY_TAG) ? 'stopped' : 'provisioning';
}

// Proxmox VE knows a VM's addresses only through the QEMU guest agent; without one there are none to report.
function toInstance(vm: PveVm): ProviderInstance {
  const state = stateOf(vm);
  const instance: ProviderInstance = { providerInstanceId: String(vm.vmid), clientToken: vm.name ?? `vm-${vm.vmid}`, state, addresses: [] };
  return vm.lock === undefined ? instance : { ...instance, message: `proxmox lock ${vm.lock}` };
}

const vmidOf = (id: string): string => {
  if (!/^\d+$/.test(id)) throw new ProviderError('not-found', `Proxmox VE VM ids are numbers; ${JSON.stringify(id.slice(0, 64))} is not one`);
  return id;
};

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });

function client(ctx: ProviderContext<ProxmoxVeConfig>) {
  const api = pveApi(ctx);
  const node = `/nodes/${encodeURIComponent(ctx.config.region)}`;
  const vmPath = (id: string) => `${node}/qemu/${vmidOf(id)}`;
  const listNode = async (path: string) => read(Data(z.array(PveVm)), await api('GET', `${path}/qemu`)).data;
  const current = async (id: string): Promise<PveVm> => read(Data(PveVm), await api('GET', `${vmPath(id)}/status/current`)).data;
  /** Polls, backing off from 50 ms to 2 s, until the VM is as `ready` wants it (by default: no task holds its lock). */
  const until = async (id: string, ready: (vm: PveVm) => boolean = (vm) => vm.lock === undefined): Promise<PveVm> => {
    for (let wait = 50; ; wait = Math.min(wait * 2, 2000)) {
      const vm = await current(id);
      if (ready(vm)) return vm;
      await sleep(wait, ctx.signal);
    }
  };
  const findByClientToken = async (clientToken: string): Promise<ProviderInstance | null> => {
    if (!DNS_LABEL.test(clientToken)) return null;
    const vm = (await listNode(node)).find((v) => v.name === clientToken && String(v.template ?? 0) !== '1');
    return vm ? toInstance(vm) : null;
  };
  /** Configures, resizes, starts and tags a cloned VM; each step is skipped when an earlier try already did it. */
  const finish = async (id: string, spec: ProviderInstanceSpec, offer: ProviderOffer): Promise<void> => {
    let vm = await until(id);
    if (tagsOf(vm).includes(READY_TAG)) return;
    await api('PUT', `${vmPath(id)}/config`, {
      cores: offer.vcpus,
      memory: offer.memoryMib,
      description: spec.name,
      ipconfig0: 'ip=dhcp',
      // The API wants the keys URL-encoded once more inside the form value.
      ...(spec.sshKeys.length > 0 ? { sshkeys: encodeURIComponent(spec.sshKeys.join('\n')) } : {}),
    });
    await api('PUT', `${vmPath(id)}/resize`, { disk: 'scsi0', size: `${offer.diskGib}G` });
    vm = await current(id);
    if (vm.status !== 'running') await api('POST', `${vmPath(id)}/status/start`);
    await api('PUT', `${vmPath(id)}/config`, { tags: READY_TAG });
  };
  return {
    async listOffers() {
      // The sizes the node can hold at all (`GET /nodes/{node}/status`: its CPUs and memory).
      const NodeStatus = Data(z.object({ cpuinfo: z.object({ cpus: z.number().int() }), memory: z.object({ total: z.number() }) }));
      const { cpuinfo, memory } = read(NodeStatus, await api('GET', `${node}/status`)).data;
      return offers.filter((o) => o.vcpus <= cpuinfo.cpus && o.memoryMib * 1024 * 1024 <= memory.total).map((o) => ({ ...o }));
    },
    async createInstance(spec: ProviderInstanceSpec): Promise<ProviderInstance> {
      if (!DNS_LABEL.test(spec.clientToken)) throw new ProviderError('rejected', 'the client token is not a DNS label, which a Proxmox VE VM name must be');
      // Cloud-init user data reaches a Proxmox VM only as a snippet file on a storage (`cicustom`), which the API cannot write.
      if (spec.userData !== undefined) throw new ProviderError('rejected', 'Proxmox VE takes cloud-init user data only as a snippet file on a storage');
      const offer = offers.find((o) => o.offerId === spec.offerId);
      if (!offer) throw new ProviderError('rejected', `no offer ${spec.offerId}`);
      let found = await findByClientToken(spec.clientToken);
      if (!found) {
        const vms = await listNode(node);
        const template = vms.find((v) => v.name === spec.image && String(v.template ?? 0) === '1');
        if (!template) throw new ProviderError('rejected', `no template named ${spec.image} on node ${ctx.config.region}`);
        const newid = read(Data(z.union([z.string(), z.number()])), await api('GET', '/cluster/nextid')).data;
        try {
          await api('POST', `${vmPath(String(template.vmid))}/clone`, { newid, name: spec.clientToken, full: 1 });
        } catch (error) {
          // Another try of this create took the id first; anything else is a real refusal.
          if (!(error instanceof ProviderError && /already exists/.test(error.message))) throw error;
        }
        found = await findByClientToken(spec.clientToken);
        if (!found) throw new ProviderError('transient', `the clone of ${spec.clientToken} is not listed yet`);
      }
      await finish(found.providerInstanceId, spec, offer);
      return toInstance(await current(found.providerInstanceId));
    },
    async getInstance(id: string) {
      return toInstance(await current(id));
    },
    findByClientToken,
    async startInstance(id: string) {
      try {
        await api('POST', `${vmPath(id)}/status/start`);
      } catch (error) {
        // Proxmox VE refuses to start a running VM; for the platform that is the start it asked for.
        if (!(error instanceof ProviderError && /already running/.test(error.message))) throw error;
      }
    },
    async stopInstance(id: string) {
      await api('POST', `${vmPath(id)}/status/stop`);
    },
    async deleteInstance(id: string) {
      try {
        const vm = await current(id);
        if (vm.lock === 'destroyed') return;
        // A running VM cannot be destroyed: stop it and wait for the stop task first.
        if (vm.status === 'running') await api('POST', `${vmPath(id)}/status/stop`);
        await until(id, (v) => v.lock === undefined && v.status === 'stopped');
        await api('DELETE', `${vmPath(id)}?purge=1`);
      } catch (error) {
        if (error instanceof ProviderError && error.kind === 'not-found') return;
        throw error;
      }
    },
    async listInstances() {
      // Every node of the cluster: a VM may have been migrated away from the node it was cloned on.
      const nodes = read(Data(z.array(z.object({ node: z.string() }))), await api('GET', '/nodes')).data;
      const instances: ProviderInstance[] = [];
      for (const { node: name } of nodes) {
        const vms = await listNode(`/nodes/${encodeURIComponent(name)}`);
        instances.push(...vms.filter((v) => String(v.template ?? 0) !== '1' && v.name?.startsWith('bc-')).map(toInstance));
      }
      return instances;
    },
  };
}

export const proxmoxVeProvider = defineProvider({ id: 'proxmox-ve', configSchema: ProxmoxVeConfig, create: client });
