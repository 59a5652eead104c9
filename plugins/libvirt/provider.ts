/**
 * The libvirt provider: instances are QEMU domains on one libvirt connection, driven through `virsh` (libvirt's own
 * client) with the runner the SDK hands providers. Idempotency rests on the domain UUID, derived from the client
 * token: a second create finds the first domain by that UUID before defining anything, and a racing define of the
 * same UUID updates the one domain instead of making a second.
 */
import { ProviderError, defineProvider } from 'better-compute/sdk';
import type { ProviderInstance, ProviderInstanceSpec, ProviderInstanceState } from 'better-compute/sdk';
import { LibvirtConfig } from './config.ts';
import { TOKEN_PATTERN, clientTokenOfXml, domainNameOf, domainUuidOf, domainXml } from './domainXml.ts';
import { needsSeed, seedIso, seedVolumeOf } from './seed.ts';
import { virshFor } from './virsh.ts';

// `virsh domstate` words (virDomainState). `in shutdown` still runs; `paused` and `pmsuspended` are powered but not
// running, and `startInstance` resumes or wakes them; `crashed` is libvirt saying the domain broke.
const stateOf: Record<string, ProviderInstanceState> = {
  running: 'running',
  idle: 'running',
  blocked: 'running',
  'in shutdown': 'running',
  paused: 'stopped',
  pmsuspended: 'stopped',
  'shut off': 'stopped',
  crashed: 'error',
  'no state': 'provisioning',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uuidArg = (id: string): string => {
  if (!UUID.test(id)) throw new ProviderError('not-found', `libvirt instance ids are domain UUIDs; ${JSON.stringify(id.slice(0, 64))} is not one`);
  return id;
};
const isOperationInvalid = (error: unknown, words: RegExp): boolean => error instanceof ProviderError && error.kind === 'rejected' && words.test(error.message);

interface Inspected {
  instance: ProviderInstance;
  /** libvirt's state word and reason, e.g. `shut off` and `unknown` for a domain defined but never started. */
  word: string;
  reason: string;
}

export const libvirtProvider = defineProvider({
  id: 'libvirt',
  configSchema: LibvirtConfig,
  create(ctx) {
    const virsh = virshFor(ctx);
    const addressesOf = async (uuid: string): Promise<string[]> => {
      // Only a libvirt network's DHCP leases tell addresses without a guest agent; a domain with no network has none.
      if (ctx.config.network === undefined) return [];
      const out = await virsh(['domifaddr', uuid, '--source', 'lease']);
      return [...out.matchAll(/\bipv[46]\s+([0-9a-fA-F.:]+)\/\d+/g)].map((m) => m[1] ?? '').filter(Boolean);
    };
    const inspect = async (uuid: string): Promise<Inspected | null> => {
      const token = clientTokenOfXml(await virsh(['dumpxml', uuid]));
      if (token === null) return null;
      const [, word = '', reason = ''] = /^(.*?)\s*(?:\((.*)\))?$/.exec((await virsh(['domstate', uuid, '--reason'])).trim()) ?? [];
      const state = stateOf[word] ?? 'error';
      const instance: ProviderInstance = { providerInstanceId: uuid, clientToken: token, state, addresses: state === 'running' ? await addressesOf(uuid) : [] };
      return { instance: word === state ? instance : { ...instance, message: `libvirt state ${word}${reason ? ` (${reason})` : ''}` }, word, reason };
    };
    const getInstance = async (id: string): Promise<ProviderInstance> => {
      const found = await inspect(uuidArg(id));
      if (!found) throw new ProviderError('not-found', `libvirt domain ${id} was not made by the platform`);
      return found.instance;
    };
    const inspectToken = async (clientToken: string): Promise<Inspected | null> => {
      if (!TOKEN_PATTERN.test(clientToken)) return null;
      const found = await inspect(domainUuidOf(clientToken)).catch((error: unknown) => {
        if (error instanceof ProviderError && error.kind === 'not-found') return null;
        throw error;
      });
      return found?.instance.clientToken === clientToken ? found : null;
    };
    const startInstance = async (id: string): Promise<void> => {
      const found = await inspect(uuidArg(id));
      if (!found) throw new ProviderError('not-found', `libvirt domain ${id} was not made by the platform`);
      const verb = found.word === 'paused' ? 'resume' : found.word === 'pmsuspended' ? 'dompmwakeup' : found.word === 'shut off' ? 'start' : null;
      if (verb === null) return;
      await virsh([verb, id], { mutating: true }).catch((error: unknown) => {
        if (!isOperationInvalid(error, /already (running|active)/i)) throw error;
      });
    };
    const notFoundIsDone = (error: unknown): void => {
      if (!(error instanceof ProviderError && error.kind === 'not-found')) throw error;
    };
    // The seed volume: created (an earlier try may have made it: its contents are written again below) and filled.
    const writeSeed = async (pool: string, uuid: string, hostname: string, spec: ProviderInstanceSpec): Promise<void> => {
      const iso = seedIso(uuid, hostname, spec);
      const volume = seedVolumeOf(uuid);
      await virsh(['vol-create-as', pool, volume, String(iso.byteLength), '--format', 'raw'], { mutating: true }).catch((error: unknown) => {
        if (!isOperationInvalid(error, /already exists|already in use/i)) throw error;
      });
      await virsh(['vol-upload', '--pool', pool, volume, '/dev/stdin'], { mutating: true, input: iso });
    };
    return {
      // The account's flavours that fit the host at all (`virsh nodeinfo`): a flavour with more vCPUs or memory than the
      // host has could never start. Asking the host also proves the connection works.
      async listOffers() {
        const info = await virsh(['nodeinfo']);
        const cpus = Number(/^CPU\(s\):\s*(\d+)/m.exec(info)?.[1] ?? Number.NaN);
        const memoryKib = Number(/^Memory size:\s*(\d+)\s*KiB/m.exec(info)?.[1] ?? Number.NaN);
        if (!Number.isFinite(cpus) || !Number.isFinite(memoryKib))
          throw new ProviderError('rejected', 'libvirt: virsh nodeinfo gave no CPU count or memory size');
        return ctx.config.flavours
          .filter((f) => f.vcpus <= cpus && f.memoryMib * 1024 <= memoryKib)
          .map((f) => ({ offerId: f.offerId, vcpus: f.vcpus, memoryMib: f.memoryMib, diskGib: f.diskGib }));
      },
      async createInstance(spec) {
        if (!TOKEN_PATTERN.test(spec.clientToken)) throw new ProviderError('rejected', 'the client token has characters other than letters, digits, . _ -');
        const flavour = ctx.config.flavours.find((f) => f.offerId === spec.offerId);
        if (!flavour) throw new ProviderError('rejected', `the account offers no flavour ${JSON.stringify(spec.offerId.slice(0, 40))}`);
        const image = ctx.config.images[spec.image];
        if (image === undefined) throw new ProviderError('rejected', `the account has no image ${JSON.stringify(spec.image.slice(0, 64))}`);
        const pool = ctx.config.seedPool;
        if (needsSeed(spec) && pool === undefined)
          throw new ProviderError('configuration', 'the account names no seedPool, so the SSH keys and user data could not reach the guest');
        const existing = await inspectToken(spec.clientToken);
        // Defined but never started ("shut off (unknown)"): an earlier create died between its define and its start.
        // libvirtd also reports a domain it loaded at its own start as `unknown`, but the platform creates again only
        // when it lost a create's answer, before it ever asked for a stop.
        if (existing && !(existing.word === 'shut off' && existing.reason === 'unknown')) return existing.instance;
        const uuid = domainUuidOf(spec.clientToken);
        const name = domainNameOf(spec.name, uuid);
        const seed = needsSeed(spec) && pool !== undefined ? { pool, volume: seedVolumeOf(uuid) } : undefined;
        // The define comes first: it is the one call whose effect a retried create finds again (by the UUID).
        if (!existing) {
          const xml = domainXml({ uuid, name, clientToken: spec.clientToken, flavour, image, network: ctx.config.network, seed });
          await virsh(['define', '/dev/stdin'], { mutating: true, input: xml });
        }
        if (seed) await writeSeed(seed.pool, uuid, name, spec);
        await startInstance(uuid);
        return getInstance(uuid);
      },
      getInstance,
      async findByClientToken(clientToken) {
        return (await inspectToken(clientToken))?.instance ?? null;
      },
      startInstance,
      // A hard power-off (`destroy`), not `shutdown`: an ACPI request the guest ignores would leave it running for ever.
      async stopInstance(id) {
        await virsh(['destroy', uuidArg(id)], { mutating: true }).catch((error: unknown) => {
          if (!isOperationInvalid(error, /not running/i)) throw error;
        });
      },
      async deleteInstance(id) {
        const uuid = uuidArg(id);
        const ignore =
          (words: RegExp) =>
          (error: unknown): void => {
            if (error instanceof ProviderError && error.kind === 'not-found') return;
            if (!isOperationInvalid(error, words)) throw error;
          };
        await virsh(['destroy', uuid], { mutating: true }).catch(ignore(/not running/i));
        await virsh(['undefine', uuid], { mutating: true }).catch(notFoundIsDone);
        // Also after the domain is gone: a delete that died between the undefine and this leaves the seed behind.
        const pool = ctx.config.seedPool;
        if (pool !== undefined) await virsh(['vol-delete', '--pool', pool, seedVolumeOf(uuid)], { mutating: true }).catch(notFoundIsDone);
      },
      async listInstances() {
        const uuids = (await virsh(['list', '--all', '--uuid']))
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => UUID.test(line));
        const instances: ProviderInstance[] = [];
        for (const uuid of uuids) {
          // A domain undefined between the list and its lookup is simply no longer there.
          const found = await inspect(uuid).catch((error: unknown) => {
            if (error instanceof ProviderError && error.kind === 'not-found') return null;
            throw error;
          });
          if (found) instances.push(found.instance);
        }
        return instances;
      },
    };
  },
});
