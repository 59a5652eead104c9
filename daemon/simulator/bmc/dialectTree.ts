import { discoverTopology, membersOf } from './topology.ts';
import type { BmcQuirks } from './quirks.ts';
import { remoteMediaSwitch } from './router.ts';
import { duplicateNics, moveMediaUnderSystems } from './treeShape.ts';
import { isPlainObject, linkId, touch, type Json, type TreeStore } from './treeStore.ts';

/** The vendor's key in `Oem` sections: `AMI` → `Ami`, as the vendors spell it there. */
const oemKey = (vendor: string) => `${vendor.charAt(0).toUpperCase()}${vendor.slice(1).toLowerCase()}`;

/** Changes the tree the way the quirks say the BMC serves it, before anything reads its topology. */
export function shapeTree(store: TreeStore, quirks: BmcQuirks, systemCount: number): void {
  const root = store.get('');
  if (!root) throw new Error('tree has no service root index.json');
  if (quirks.vendor !== undefined) root.Vendor = quirks.vendor;
  if (quirks.sessions === 'absent') {
    const service = store.resolve(linkId(root.SessionService));
    delete root.SessionService;
    if (isPlainObject(root.Links)) delete root.Links.Sessions;
    if (service) for (const key of store.keysUnder(service.key)) store.remove(key);
  }
  // Several systems cannot share one CD: a multi-node BMC gives each its own slots.
  if (quirks.mediaUnder === 'system' || systemCount > 1) moveMediaUnderSystems(store);
  if (quirks.mediaTypes === 'none') {
    for (const key of discoverTopology(store).mediaKeys) {
      const slot = store.get(key);
      if (slot) delete slot.MediaTypes;
    }
  }
  if (quirks.remoteMedia === 'disabled') {
    const vendor = oemKey(quirks.vendor ?? (typeof root.Vendor === 'string' ? root.Vendor : 'Ami'));
    for (const manager of membersOf(store, store.resolve(linkId(root.Managers))?.doc)) {
      if (remoteMediaSwitch(manager.doc)) continue;
      const oem: Json = isPlainObject(manager.doc.Oem) ? manager.doc.Oem : {};
      const own: Json = isPlainObject(oem[vendor]) ? oem[vendor] : {};
      own.VirtualMedia = { ...(isPlainObject(own.VirtualMedia) ? own.VirtualMedia : {}), RMediaStatus: 'Disabled' };
      oem[vendor] = own;
      manager.doc.Oem = oem;
      touch(manager.doc);
    }
  }
  if (quirks.duplicateMacs) duplicateNics(store);
  touch(root);
}
