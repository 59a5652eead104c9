import { BaseMessages, badValue, redfishError, success, type SimResponse } from './responses.ts';
import type { Timers } from './timers.ts';
import { isPlainObject, linkId, toKey, touch, type Json, type TreeStore } from './treeStore.ts';

/** The action's name and parameter as the Gigabyte H262 tree declares them (fixtures/redfish/gigabyte-ami-h262, Managers/Self). */
const ENABLE_RMEDIA_ACTION = '#VirtualMedia.EnableRMedia';
const PARAMETER = 'RMediaState';

/** That tree's `Managers/Self/Oem/Ami/VirtualMedia.EnableRMediaActionInfo`, served at `infoUri`. */
function enableRMediaActionInfo(infoUri: string): Json {
  return {
    '@odata.context': '/redfish/v1/$metadata#ActionInfo.ActionInfo',
    '@odata.id': infoUri,
    '@odata.type': '#ActionInfo.v1_1_1.ActionInfo',
    Description:
      'This action is used to enable or disable Remote Media support. CD Media instances will be displayed under VirtualMedia collection only when RMedia support is enabled',
    Name: 'RMediaSupportAction',
    Parameters: [{ AllowableValues: ['Enable', 'Disable'], DataType: 'String', Name: PARAMETER, Required: true }],
  };
}

/**
 * Gives a manager AMI's remote-media switch where the tree lacks it (the `remoteMedia: 'disabled'` quirk on a non-AMI
 * tree): the action and its ActionInfo exactly where and as the H262 tree has them.
 */
export function graftEnableRMedia(store: TreeStore, manager: Json): void {
  const actions = isPlainObject(manager.Actions) ? manager.Actions : {};
  const oem = isPlainObject(actions.Oem) ? actions.Oem : {};
  if (Object.keys(oem).some((name) => name.endsWith('EnableRMedia'))) return;
  const managerUri = String(manager['@odata.id']).replace(/\/+$/, '');
  const infoUri = `${managerUri}/Oem/Ami/VirtualMedia.EnableRMediaActionInfo`;
  oem[ENABLE_RMEDIA_ACTION] = { '@Redfish.ActionInfo': infoUri, target: `${managerUri}/Actions/Oem/Ami/VirtualMedia.EnableRMedia` };
  actions.Oem = oem;
  manager.Actions = actions;
  store.put(toKey(infoUri)!, enableRMediaActionInfo(infoUri));
  touch(manager);
}

/**
 * AMI MegaRAC's remote-media switch, modelled on the H262 tree: one OEM action with `RMediaState` `Enable` or `Disable`,
 * and no status property anywhere. Its ActionInfo says what it does: while remote media is off the VirtualMedia
 * collections list no slots (and the slots answer 404); switching it on shows them once the BMC's media service has
 * restarted (`delayMs`); switching it off takes out whatever was mounted.
 */
export class RemoteMediaModel {
  private enabled = true;
  /** Members of each media collection while they are hidden. */
  private readonly hidden = new Map<string, unknown[]>();

  constructor(
    private readonly store: TreeStore,
    private readonly collectionKeys: readonly string[],
    private readonly timers: Timers,
    private readonly delayMs: number,
    private readonly unmountAll: () => void,
  ) {}

  /** Whether `key` is a slot hidden while remote media is off. */
  hides(key: string): boolean {
    return [...this.hidden.values()].some((members) => members.some((m) => toKey(linkId(m) ?? '') === key));
  }

  /** The action: `Enable` or `Disable` (as its ActionInfo allows). */
  switch(body: Json, allowed: readonly string[] | undefined): SimResponse {
    const state = body[PARAMETER];
    if (state === undefined) return redfishError(400, BaseMessages.ActionParameterMissing, `The action requires the parameter ${PARAMETER}.`);
    if (typeof state !== 'string' || !(allowed ?? ['Enable', 'Disable']).includes(state)) return badValue(PARAMETER, state);
    const on = state === 'Enable';
    if (on) this.timers.after(this.delayMs, () => this.set(true));
    else this.set(false);
    return success();
  }

  /** Switches remote media off at start (`BmcQuirks.remoteMedia: 'disabled'`). */
  disable(): void {
    this.set(false);
  }

  private set(on: boolean): void {
    if (on === this.enabled) return;
    this.enabled = on;
    if (!on) this.unmountAll();
    for (const key of this.collectionKeys) {
      const collection = this.store.get(key);
      if (!collection) continue;
      if (on) {
        collection.Members = this.hidden.get(key) ?? [];
        this.hidden.delete(key);
      } else {
        this.hidden.set(key, Array.isArray(collection.Members) ? collection.Members : []);
        collection.Members = [];
      }
      collection['Members@odata.count'] = (collection.Members as unknown[]).length;
      touch(collection);
    }
  }
}
