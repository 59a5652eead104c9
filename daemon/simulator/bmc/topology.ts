import { isPlainObject, linkId, toKey, type Json, type TreeStore } from './treeStore.ts';

export type ActionRoute =
  | { kind: 'reset'; systemKey: string }
  | { kind: 'insertMedia'; mediaKey: string }
  | { kind: 'ejectMedia'; mediaKey: string }
  | { kind: 'simpleUpdate' }
  /** AMI's remote-media switch (`remoteMedia.ts`), with the `RMediaState` values its ActionInfo allows. */
  | { kind: 'remoteMedia'; allowed: string[] | undefined };

/** Where one ComputerSystem's live behaviour sits in the tree. */
export interface SystemTopology {
  key: string;
  biosKey: string | undefined;
  biosSettingsKey: string | undefined;
  /** Virtual media this system boots from: its own, else its managers' (Links.ManagedBy, else every manager). */
  mediaKeys: string[];
  volumeCollectionKeys: string[];
  /** ResetType values the tree allows; undefined when it declares none (then every modelled type is accepted). */
  resetAllowed: string[] | undefined;
}

/**
 * Where the live behaviour sits in a tree. It is found the way a client must find it (links from the service
 * root, action URIs from `Actions.*.target`), so the simulator serves any tree without knowing its layout.
 */
export interface SimTopology {
  systems: SystemTopology[];
  sessionsKey: string | undefined;
  tasksKey: string | undefined;
  managerKeys: string[];
  /** Every virtual media slot, under managers and systems. */
  mediaKeys: string[];
  /** The collections those slots are members of. */
  mediaCollectionKeys: string[];
  volumeCollectionKeys: Set<string>;
  transferProtocols: string[] | undefined;
  actions: Map<string, ActionRoute>;
}

function follow(store: TreeStore, from: Json | undefined, ...path: string[]): { key: string; doc: Json } | undefined {
  let node: unknown = from;
  for (const name of path) node = isPlainObject(node) ? node[name] : undefined;
  return store.resolve(linkId(node));
}

export function membersOf(store: TreeStore, collection: Json | undefined): { key: string; doc: Json }[] {
  const members = Array.isArray(collection?.Members) ? collection.Members : [];
  return members.flatMap((m) => store.resolve(linkId(m)) ?? []);
}

/** Allowable values of an action parameter: inline annotation first, then the `@Redfish.ActionInfo` resource. */
export function allowableValues(store: TreeStore, action: unknown, parameter: string): string[] | undefined {
  if (!isPlainObject(action)) return undefined;
  const inline = action[`${parameter}@Redfish.AllowableValues`];
  if (Array.isArray(inline)) return inline.filter((v): v is string => typeof v === 'string');
  const info = store.resolve(action['@Redfish.ActionInfo'])?.doc;
  const params: unknown[] = Array.isArray(info?.Parameters) ? info.Parameters : [];
  const param = params.find((p) => isPlainObject(p) && p.Name === parameter);
  const values = isPlainObject(param) ? param.AllowableValues : undefined;
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : undefined;
}

function targetKey(action: unknown): string | undefined {
  return isPlainObject(action) && typeof action.target === 'string' ? toKey(action.target) : undefined;
}

/** Standard actions plus any vendor's `Oem.<Vendor>.Actions` entry whose name ends with the given suffix. */
function mediaActionKeys(media: Json, standard: string, oemSuffix: string): string[] {
  const keys: string[] = [];
  const actions = isPlainObject(media.Actions) ? media.Actions : {};
  const std = targetKey(actions[standard]);
  if (std !== undefined) keys.push(std);
  const oem = isPlainObject(media.Oem) ? media.Oem : {};
  for (const vendor of Object.values(oem)) {
    const vendorActions = isPlainObject(vendor) && isPlainObject(vendor.Actions) ? vendor.Actions : {};
    for (const [name, action] of Object.entries(vendorActions)) {
      const key = name.endsWith(oemSuffix) ? targetKey(action) : undefined;
      if (key !== undefined) keys.push(key);
    }
  }
  return keys;
}

/** The slots of a media collection (recorded in `collections`), with their actions routed. */
function mediaOf(store: TreeStore, collection: { key: string; doc: Json } | undefined, actions: Map<string, ActionRoute>, collections: Set<string>): string[] {
  if (collection) collections.add(collection.key);
  const keys: string[] = [];
  for (const media of membersOf(store, collection?.doc)) {
    keys.push(media.key);
    for (const key of mediaActionKeys(media.doc, '#VirtualMedia.InsertMedia', 'InsertVirtualMedia'))
      actions.set(key, { kind: 'insertMedia', mediaKey: media.key });
    for (const key of mediaActionKeys(media.doc, '#VirtualMedia.EjectMedia', 'EjectVirtualMedia'))
      actions.set(key, { kind: 'ejectMedia', mediaKey: media.key });
  }
  return keys;
}

/** A manager's OEM action whose name ends with `EnableRMedia`, directly under `Actions.Oem` where AMI puts it. */
function remoteMediaAction(store: TreeStore, manager: Json, actions: Map<string, ActionRoute>): void {
  const oem = isPlainObject(manager.Actions) && isPlainObject(manager.Actions.Oem) ? manager.Actions.Oem : {};
  for (const [name, action] of Object.entries(oem)) {
    const key = name.endsWith('EnableRMedia') ? targetKey(action) : undefined;
    if (key !== undefined) actions.set(key, { kind: 'remoteMedia', allowed: allowableValues(store, action, 'RMediaState') });
  }
}

export function discoverTopology(store: TreeStore): SimTopology {
  const root = store.get('');
  if (!root) throw new Error('tree has no service root index.json');
  const actions = new Map<string, ActionRoute>();
  const mediaCollections = new Set<string>();
  const managers = membersOf(store, follow(store, root, 'Managers')?.doc);
  const managerMedia = new Map(managers.map((m) => [m.key, mediaOf(store, follow(store, m.doc, 'VirtualMedia'), actions, mediaCollections)]));
  for (const manager of managers) remoteMediaAction(store, manager.doc, actions);

  const systems = membersOf(store, follow(store, root, 'Systems')?.doc).map((system): SystemTopology => {
    const sysActions = isPlainObject(system.doc.Actions) ? system.doc.Actions : {};
    const resetAction = sysActions['#ComputerSystem.Reset'];
    const resetKey = targetKey(resetAction);
    if (resetKey !== undefined) actions.set(resetKey, { kind: 'reset', systemKey: system.key });
    const bios = follow(store, system.doc, 'Bios');
    const volumeCollectionKeys = membersOf(store, follow(store, system.doc, 'Storage')?.doc).flatMap((storage) => {
      const volumes = linkId(storage.doc.Volumes);
      const key = volumes === undefined ? undefined : toKey(volumes);
      return key === undefined ? [] : [key];
    });
    const own = mediaOf(store, follow(store, system.doc, 'VirtualMedia'), actions, mediaCollections);
    const links = isPlainObject(system.doc.Links) ? system.doc.Links : {};
    const managedBy = (Array.isArray(links.ManagedBy) ? links.ManagedBy : []).flatMap((m) => store.resolve(linkId(m))?.key ?? []);
    const fromManagers = (managedBy.length > 0 ? managedBy : managers.map((m) => m.key)).flatMap((key) => managerMedia.get(key) ?? []);
    return {
      key: system.key,
      biosKey: bios?.key,
      biosSettingsKey: follow(store, bios?.doc, '@Redfish.Settings', 'SettingsObject')?.key,
      mediaKeys: own.length > 0 ? own : fromManagers,
      volumeCollectionKeys,
      resetAllowed: allowableValues(store, resetAction, 'ResetType'),
    };
  });
  if (systems.length === 0) throw new Error('tree has no ComputerSystem reachable from the service root');

  const update = follow(store, root, 'UpdateService')?.doc;
  const updateActions = isPlainObject(update?.Actions) ? update.Actions : {};
  const simpleUpdate = updateActions['#UpdateService.SimpleUpdate'];
  const simpleUpdateKey = targetKey(simpleUpdate);
  if (simpleUpdateKey !== undefined) actions.set(simpleUpdateKey, { kind: 'simpleUpdate' });

  const rootLinks = isPlainObject(root.Links) ? root.Links : {};
  const sessions = store.resolve(linkId(rootLinks.Sessions)) ?? follow(store, follow(store, root, 'SessionService')?.doc, 'Sessions');

  return {
    systems,
    sessionsKey: sessions?.key,
    tasksKey: follow(store, follow(store, root, 'Tasks')?.doc, 'Tasks')?.key,
    managerKeys: managers.map((m) => m.key),
    mediaKeys: [...new Set([...managerMedia.values(), ...systems.map((s) => s.mediaKeys)].flat())],
    mediaCollectionKeys: [...mediaCollections],
    volumeCollectionKeys: new Set(systems.flatMap((s) => s.volumeCollectionKeys)),
    transferProtocols: allowableValues(store, simpleUpdate, 'TransferProtocol'),
    actions,
  };
}
