import { membersOf } from './topology.ts';
import { addMember, childUri, isPlainObject, linkId, toKey, touch, type Json, type TreeStore } from './treeStore.ts';

/** Who a simulated system is: what inspection reads back. Unset fields keep the tree's (or, for a copy, a derived) value. */
export interface SystemIdentity {
  /** SMBIOS UUID (`ComputerSystem.UUID`). */
  uuid?: string;
  serial?: string;
  /** MACs of the system's EthernetInterfaces, in the order the collection lists them. */
  macs?: string[];
}

/** A found document's own `@odata.id`, without a trailing slash. */
const uriOf = (found: { key: string; doc: Json }) => String(found.doc['@odata.id'] ?? `/redfish/v1/${found.key}`).replace(/\/+$/, '');

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Copies every document at or under `fromKey` to `toUri`, rewriting links that pointed into the old place. */
export function copySubtree(store: TreeStore, fromKey: string, fromUri: string, toUri: string): void {
  const pattern = new RegExp(`${escape(fromUri.replace(/\/+$/, ''))}(?=[/"#?]|$)`, 'gi');
  const toBase = toKey(toUri)!;
  for (const key of store.keysUnder(fromKey)) {
    const doc = store.get(key);
    if (doc) store.put(`${toBase}${key.slice(fromKey.length)}`, JSON.parse(JSON.stringify(doc).replace(pattern, toUri.replace(/\/+$/, ''))) as Json);
  }
}

const systemsCollection = (store: TreeStore) => store.resolve(linkId(store.get('')?.Systems));

export function systemsOf(store: TreeStore): { key: string; doc: Json }[] {
  return membersOf(store, systemsCollection(store)?.doc);
}

/**
 * Makes a tree serve `count` systems by copying its first one (and everything below it) under new ids, as a BMC of a
 * multi-node chassis does; each copy gets its own UUID, serial number and MACs, and the first system's managers
 * manage it too. Chassis and drives stay shared.
 */
export function synthesiseSystems(store: TreeStore, count: number): void {
  const collection = systemsCollection(store);
  const existing = systemsOf(store);
  const template = existing[0];
  if (!collection || !template) throw new Error('tree has no ComputerSystem to copy');
  const templateUri = uriOf(template);
  const baseId = templateUri.split('/').pop()!;
  for (let n = existing.length + 1; n <= count; n += 1) {
    const id = /^\d+$/.test(baseId) ? String(Number(baseId) + n - 1) : `${baseId}-${n}`;
    const uri = `${templateUri.slice(0, templateUri.length - baseId.length)}${id}`;
    copySubtree(store, template.key, templateUri, uri);
    const copy = store.get(toKey(uri)!)!;
    copy.Id = id;
    copy.Name = `${typeof copy.Name === 'string' ? copy.Name : 'System'} ${n}`;
    personalise(store, toKey(uri)!, derivedIdentity(store, template.key, n));
    addMember(collection.doc, uri);
    const links = isPlainObject(copy.Links) ? copy.Links : {};
    for (const manager of Array.isArray(links.ManagedBy) ? links.ManagedBy : []) {
      const managerLinks = store.resolve(linkId(manager))?.doc.Links;
      if (isPlainObject(managerLinks) && Array.isArray(managerLinks.ManagerForServers)) managerLinks.ManagerForServers.push({ '@odata.id': uri });
    }
  }
}

function nicsOf(store: TreeStore, systemKey: string): Json[] {
  return membersOf(store, store.resolve(linkId(store.get(systemKey)?.EthernetInterfaces))?.doc).map((m) => m.doc);
}

/** A copy's identity: the template's with the n-th variation in the UUID's last group, the serial and a MAC octet. */
function derivedIdentity(store: TreeStore, templateKey: string, n: number): SystemIdentity {
  const system = store.get(templateKey)!;
  const uuid = typeof system.UUID === 'string' ? system.UUID.replace(/.{4}$/, n.toString(16).padStart(4, '0')) : undefined;
  const macs = nicsOf(store, templateKey).flatMap((nic) => {
    const mac = typeof nic.MACAddress === 'string' ? nic.MACAddress : typeof nic.PermanentMACAddress === 'string' ? nic.PermanentMACAddress : undefined;
    if (!mac) return [];
    const octets = mac.split(/[:-]/);
    octets[3] = (Number.parseInt(octets[3] ?? '0', 16) ^ n).toString(16).padStart(2, '0');
    return [octets.join(':')];
  });
  return { ...(uuid ? { uuid } : {}), serial: `${typeof system.SerialNumber === 'string' ? system.SerialNumber : 'SIM'}-${n}`, macs };
}

/** Gives a system the identity asked for (UUID, serial, NIC MACs in order). */
export function personalise(store: TreeStore, systemKey: string, identity: SystemIdentity): void {
  const system = store.get(systemKey);
  if (!system) throw new Error(`no system at ${systemKey}`);
  if (identity.uuid !== undefined) system.UUID = identity.uuid;
  if (identity.serial !== undefined) system.SerialNumber = identity.serial;
  touch(system);
  const nics = nicsOf(store, systemKey);
  if ((identity.macs?.length ?? 0) > nics.length) throw new Error(`system ${systemKey} has ${nics.length} NICs, not ${identity.macs!.length}`);
  identity.macs?.forEach((mac, i) => {
    const nic = nics[i]!;
    nic.MACAddress = mac;
    if ('PermanentMACAddress' in nic) nic.PermanentMACAddress = mac;
    touch(nic);
  });
}

/** Moves the managers' virtual media under every system (each gets its own slots), as multi-node BMCs serve it. */
export function moveMediaUnderSystems(store: TreeStore): void {
  const managers = membersOf(store, store.resolve(linkId(store.get('')?.Managers))?.doc);
  const collections = managers.flatMap((m) => {
    const found = store.resolve(linkId(m.doc.VirtualMedia));
    return found ? [{ manager: m.doc, ...found }] : [];
  });
  const source = collections[0];
  if (!source) return;
  const sourceUri = uriOf(source);
  for (const system of systemsOf(store)) {
    const systemUri = uriOf(system);
    copySubtree(store, source.key, sourceUri, `${systemUri}/VirtualMedia`);
    system.doc.VirtualMedia = { '@odata.id': `${systemUri}/VirtualMedia` };
    touch(system.doc);
  }
  for (const { manager } of collections) {
    delete manager.VirtualMedia;
    touch(manager);
  }
}

/** Adds, for each system NIC, a second interface with the same MAC (what `duplicateMacs` serves). */
export function duplicateNics(store: TreeStore): void {
  for (const system of systemsOf(store)) {
    const collection = store.resolve(linkId(system.doc.EthernetInterfaces));
    if (!collection) continue;
    for (const nic of membersOf(store, collection.doc)) {
      const id = `${String(nic.doc.Id ?? 'nic')}-alias`;
      const uri = childUri(collection.doc, collection.key, id);
      store.put(toKey(uri)!, { ...structuredClone(nic.doc), '@odata.id': uri, Id: id });
      addMember(collection.doc, uri);
    }
  }
}
