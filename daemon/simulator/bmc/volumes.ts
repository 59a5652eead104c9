import { BaseMessages, badValue, redfishError, type SimResponse } from './responses.ts';
import { addMember, childUri, isPlainObject, linkId, parentKey, removeMember, type Json, type TreeStore } from './treeStore.ts';

/** RAID types the storage's controllers declare; undefined when they declare none. */
function supportedRaidTypes(storage: Json | undefined): string[] | undefined {
  const controllers: unknown[] = Array.isArray(storage?.StorageControllers) ? storage.StorageControllers : [];
  const types = controllers.flatMap((c): unknown[] => (isPlainObject(c) && Array.isArray(c.SupportedRAIDTypes) ? c.SupportedRAIDTypes : []));
  return types.length > 0 ? types.filter((t): t is string => typeof t === 'string') : undefined;
}

/** Volume create/delete on the Storage `Volumes` collections the tree declares (DSP0268 Volume). */
export class VolumeModel {
  private nextId = 1;

  constructor(private readonly store: TreeStore) {}

  create(collectionKey: string, body: Json): SimResponse {
    const collection = this.store.get(collectionKey);
    if (!collection) return redfishError(404, BaseMessages.ResourceNotFound, 'Volumes collection not found.');
    const raidType = body.RAIDType;
    const supported = supportedRaidTypes(this.store.get(parentKey(collectionKey)));
    if (raidType !== undefined && (typeof raidType !== 'string' || (supported && !supported.includes(raidType)))) {
      return badValue('RAIDType', raidType);
    }
    if (body.CapacityBytes !== undefined && (typeof body.CapacityBytes !== 'number' || body.CapacityBytes <= 0)) {
      return badValue('CapacityBytes', body.CapacityBytes);
    }
    const links = isPlainObject(body.Links) ? body.Links : {};
    const drives = Array.isArray(links.Drives) ? links.Drives : [];
    for (const drive of drives) {
      if (!this.store.resolve(linkId(drive))) return badValue('Links/Drives', drive);
    }
    let id = `Volume${this.nextId++}`;
    while (this.store.get(`${collectionKey}/${id.toLowerCase()}`)) id = `Volume${this.nextId++}`;
    const uri = childUri(collection, collectionKey, id);
    const volume: Json = {
      '@odata.id': uri,
      '@odata.type': '#Volume.v1_10_2.Volume',
      Id: id,
      Name: typeof body.Name === 'string' ? body.Name : id,
      Status: { State: 'Enabled', Health: 'OK' },
      ...(raidType === undefined ? {} : { RAIDType: raidType }),
      ...(body.CapacityBytes === undefined ? {} : { CapacityBytes: body.CapacityBytes }),
      Links: { Drives: drives },
    };
    this.store.put(`${collectionKey}/${id.toLowerCase()}`, volume);
    addMember(collection, uri);
    return { status: 201, body: volume, headers: { Location: uri } };
  }

  remove(key: string): SimResponse {
    const collection = this.store.get(parentKey(key));
    if (collection) removeMember(collection, key);
    this.store.remove(key);
    return { status: 204 };
  }
}
