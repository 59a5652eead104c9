import { BaseMessages, badValue, redfishError, success, type SimResponse } from './responses.ts';
import { isPlainObject, touch, type Json, type TreeStore } from './treeStore.ts';

/**
 * BIOS settings follow the Redfish settings pattern: writes go to the `@Redfish.Settings` SettingsObject and
 * only reach `Bios.Attributes` when the host next boots, because the firmware reads them during POST.
 */
export class BiosModel {
  private pendingAttrs: Json = {};

  constructor(
    private readonly store: TreeStore,
    private readonly biosKey: string | undefined,
    private readonly settingsKey: string | undefined,
    /** `BmcQuirks.biosSettings === 'dropped'`: the POST throws pending settings away. */
    private readonly dropped = false,
  ) {}

  get pending(): Json {
    return { ...this.pendingAttrs };
  }

  private current(): Json {
    const bios = this.biosKey === undefined ? undefined : this.store.get(this.biosKey);
    return isPlainObject(bios?.Attributes) ? bios.Attributes : {};
  }

  patch(target: Json, body: Json): SimResponse {
    const names = Object.keys(body);
    if (names.some((n) => n !== 'Attributes') || !isPlainObject(body.Attributes)) {
      return redfishError(400, BaseMessages.PropertyNotWritable, 'Only Attributes can be written on the BIOS settings resource.');
    }
    const current = this.current();
    for (const [name, value] of Object.entries(body.Attributes)) {
      // Real BMCs validate against the attribute registry; the current attributes are the best registry stand-in.
      if (!(name in current)) {
        return redfishError(400, BaseMessages.PropertyUnknown, `The property Attributes/${name} is not a valid property.`);
      }
      const expected = current[name];
      if (expected !== null && value !== null && typeof expected !== typeof value) {
        return redfishError(400, BaseMessages.PropertyValueTypeError, `The value for Attributes/${name} has the wrong type.`);
      }
      if (typeof value === 'object' && value !== null) return badValue(`Attributes/${name}`, value);
    }
    Object.assign(this.pendingAttrs, body.Attributes);
    const attributes = isPlainObject(target.Attributes) ? target.Attributes : {};
    target.Attributes = { ...attributes, ...body.Attributes };
    touch(target);
    return success();
  }

  /** Called on every power-on / restart. */
  applyPending(): void {
    if (this.dropped) this.pendingAttrs = {};
    if (Object.keys(this.pendingAttrs).length === 0 || this.biosKey === undefined) return;
    const bios = this.store.get(this.biosKey);
    if (!bios) return;
    bios.Attributes = { ...this.current(), ...this.pendingAttrs };
    touch(bios);
    const settings = this.settingsKey === undefined ? undefined : this.store.get(this.settingsKey);
    if (settings) {
      settings.Attributes = { ...(bios.Attributes as Json) };
      touch(settings);
    }
    this.pendingAttrs = {};
  }
}
