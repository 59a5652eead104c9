import { discoverTopology, membersOf } from './topology.ts';
import type { BmcQuirks } from './quirks.ts';
import { graftEnableRMedia } from './remoteMedia.ts';
import { duplicateNics, moveMediaUnderSystems } from './treeShape.ts';
import { isPlainObject, linkId, touch, type TreeStore } from './treeStore.ts';

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
  // AMI's switch, as the H262 tree has it, on every manager (RemoteMediaModel starts it off).
  if (quirks.remoteMedia === 'disabled') {
    for (const manager of membersOf(store, store.resolve(linkId(root.Managers))?.doc)) graftEnableRMedia(store, manager.doc);
  }
  if (quirks.duplicateMacs) duplicateNics(store);
  touch(root);
}
