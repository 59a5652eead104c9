import { BaseMessages, notAllowedNow, redfishError, success, type SimResponse } from './responses.ts';
import type { Timers } from './timers.ts';
import { isPlainObject, touch, type Json, type TreeStore } from './treeStore.ts';

const writable = new Set(['Image', 'Inserted', 'WriteProtected', 'TransferProtocolType', 'UserName', 'Password', 'Oem']);

function hpeOem(media: Json): Json | undefined {
  const oem = isPlainObject(media.Oem) ? media.Oem : undefined;
  return isPlainObject(oem?.Hpe) ? oem.Hpe : undefined;
}

function emptied(media: Json): void {
  media.Image = null;
  media.ImageName = null;
  media.Inserted = false;
  media.ConnectedVia = 'NotConnected';
  const hpe = hpeOem(media);
  if (hpe && 'BootOnNextServerReset' in hpe) hpe.BootOnNextServerReset = false;
}

/**
 * Virtual media slots. The BMC mounts asynchronously (it has to fetch the image), so Image/Inserted/ConnectedVia
 * change only after `delayMs`; `intended` tracks accepted-but-not-yet-visible requests so a second insert during
 * the mount is refused as a real BMC would.
 */
export class VirtualMediaModel {
  private readonly intended = new Map<string, boolean>();

  constructor(
    private readonly store: TreeStore,
    private readonly delayMs: number,
    private readonly timers: Timers,
    /** `BmcQuirks.insertFlags === 'imageOnly'`: `Inserted` and `WriteProtected` are refused. */
    private readonly imageOnly = false,
  ) {}

  private refusedFlags(body: Json): SimResponse | undefined {
    const flag = this.imageOnly ? ['Inserted', 'WriteProtected'].find((name) => name in body) : undefined;
    return flag === undefined ? undefined : redfishError(400, BaseMessages.ActionParameterNotSupported, `The parameter ${flag} is not supported.`);
  }

  private isInserted(key: string, media: Json): boolean {
    return this.intended.get(key) ?? media.Inserted === true;
  }

  private schedule(key: string, media: Json, apply: () => void, inserted: boolean): void {
    this.intended.set(key, inserted);
    this.timers.after(this.delayMs, () => {
      apply();
      touch(media);
    });
  }

  private mount(key: string, media: Json, image: string, writeProtected: boolean): void {
    this.schedule(
      key,
      media,
      () => {
        media.Image = image;
        media.ImageName = image.split('/').pop() ?? image;
        media.Inserted = true;
        media.WriteProtected = writeProtected;
        media.ConnectedVia = 'URI';
      },
      true,
    );
  }

  private unmount(key: string, media: Json): void {
    this.schedule(key, media, () => emptied(media), false);
  }

  /** Takes out at once whatever the slots hold (remote media switched off). */
  dropAll(keys: readonly string[]): void {
    for (const key of keys) {
      const media = this.store.get(key);
      if (!media) continue;
      this.intended.delete(key);
      emptied(media);
      touch(media);
    }
  }

  /** InsertMedia (standard) and HpeiLOVirtualMedia.InsertVirtualMedia share this: both take `Image`. */
  insert(key: string, body: Json): SimResponse {
    const media = this.store.get(key);
    if (!media) return redfishError(404, BaseMessages.ResourceNotFound, 'Virtual media slot not found.');
    if (typeof body.Image !== 'string' || body.Image === '') {
      return redfishError(400, BaseMessages.ActionParameterMissing, 'The action requires the parameter Image.');
    }
    const refused = this.refusedFlags(body);
    if (refused) return refused;
    if (body.Inserted === false) {
      return redfishError(400, BaseMessages.ActionParameterNotSupported, 'Inserted=false is not supported by InsertMedia.');
    }
    if (this.isInserted(key, media)) return notAllowedNow('InsertMedia while media is inserted');
    this.mount(key, media, body.Image, body.WriteProtected !== false);
    return success();
  }

  eject(key: string): SimResponse {
    const media = this.store.get(key);
    if (!media) return redfishError(404, BaseMessages.ResourceNotFound, 'Virtual media slot not found.');
    if (!this.isInserted(key, media)) return notAllowedNow('EjectMedia while no media is inserted');
    this.unmount(key, media);
    return success();
  }

  /** The pre-action way (VirtualMedia < 1.2, and the DMTF tower, which declares no actions): PATCH Image/Inserted. */
  patch(key: string, media: Json, body: Json): SimResponse {
    for (const name of Object.keys(body)) {
      if (!writable.has(name)) {
        return redfishError(400, BaseMessages.PropertyNotWritable, `The property ${name} is read only.`);
      }
    }
    // Ejecting by `Inserted: false` is the PATCH way even where inserts take `Image` only.
    const refused = body.Inserted === false ? undefined : this.refusedFlags(body);
    if (refused) return refused;
    const hpePatch = isPlainObject(body.Oem) && isPlainObject(body.Oem.Hpe) ? body.Oem.Hpe : undefined;
    const hpe = hpeOem(media);
    if (hpePatch && hpe && typeof hpePatch.BootOnNextServerReset === 'boolean') {
      hpe.BootOnNextServerReset = hpePatch.BootOnNextServerReset;
    }
    const image = body.Image;
    const wantsEject = body.Inserted === false || image === null || image === '';
    if (wantsEject) {
      if (this.isInserted(key, media)) this.unmount(key, media);
    } else if (typeof image === 'string') {
      this.mount(key, media, image, body.WriteProtected !== false);
    } else if (typeof body.WriteProtected === 'boolean') {
      media.WriteProtected = body.WriteProtected;
    }
    touch(media);
    return success();
  }

  /** HPE's "boot on next server reset" flag: a one-shot boot from the inserted CD. */
  consumeBootOnNextReset(keys: readonly string[]): boolean {
    for (const key of keys) {
      const media = this.store.get(key);
      const hpe = media ? hpeOem(media) : undefined;
      if (media && hpe?.BootOnNextServerReset === true && media.Inserted === true) {
        hpe.BootOnNextServerReset = false;
        touch(media);
        return true;
      }
    }
    return false;
  }
}
