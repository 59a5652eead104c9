import type { IncomingHttpHeaders } from 'node:http';

import type { AuthGate } from './auth.ts';
import { patchSystem } from './boot.ts';
import type { VirtualMediaModel } from './media.ts';
import type { RemoteMediaModel } from './remoteMedia.ts';
import type { BmcQuirks } from './quirks.ts';
import { BaseMessages, methodNotAllowed, notFound, redfishError, type SimResponse } from './responses.ts';
import type { SystemModel } from './system.ts';
import type { TaskModel } from './tasks.ts';
import type { SimTopology } from './topology.ts';
import { etagOf, ifMatchOk, parentKey, type Json, type TreeStore } from './treeStore.ts';
import type { VolumeModel } from './volumes.ts';

export interface SimRequest {
  method: string;
  path: string;
  /** undefined when the path is outside /redfish/v1 */
  key: string | undefined;
  headers: IncomingHttpHeaders;
  body: Json;
}

export interface SimModels {
  store: TreeStore;
  topology: SimTopology;
  quirks: BmcQuirks;
  auth: AuthGate;
  /** By ComputerSystem key. */
  systems: ReadonlyMap<string, SystemModel>;
  media: VirtualMediaModel;
  remoteMedia: RemoteMediaModel;
  tasks: TaskModel;
  volumes: VolumeModel;
}

function isOpen(m: SimModels, method: string, key: string): boolean {
  // Real BMCs serve the service root without credentials (clients need it to find the SessionService),
  // and creating a session is how a client authenticates in the first place.
  return (method === 'GET' && key === '') || (method === 'POST' && key === m.topology.sessionsKey);
}

function systemWith(m: SimModels, match: (s: SystemModel) => boolean): SystemModel | undefined {
  return [...m.systems.values()].find(match);
}

/** The methods a resource answers (RFC 9110 `Allow`): what a client such as python-sushy reads before writing. */
export function allowedMethods(m: SimModels, key: string): string[] | undefined {
  if (m.topology.actions.has(key)) return ['POST'];
  if (!m.store.get(key) || m.remoteMedia.hides(key)) return undefined;
  const methods = ['GET', 'HEAD'];
  if (patchable(m, key)) methods.push('PATCH');
  if (key === m.topology.sessionsKey || m.topology.volumeCollectionKeys.has(key)) methods.push('POST');
  const parent = parentKey(key);
  if (parent === m.topology.sessionsKey || m.topology.volumeCollectionKeys.has(parent)) methods.push('DELETE');
  return methods;
}

function patchable(m: SimModels, key: string): boolean {
  return (
    m.systems.has(key) ||
    systemWith(m, (s) => s.topology.biosSettingsKey === key || (s.topology.biosSettingsKey === undefined && s.topology.biosKey === key)) !== undefined ||
    m.topology.mediaKeys.includes(key)
  );
}

function get(m: SimModels, req: SimRequest, key: string): SimResponse {
  if (m.topology.actions.has(key)) return methodNotAllowed(req.method, req.path);
  const doc = m.remoteMedia.hides(key) ? undefined : m.store.get(key);
  if (!doc) return notFound(req.path);
  if (m.quirks.ifMatch !== 'requiredUnpublished') return { status: 200, body: doc, headers: { ETag: etagOf(doc) } };
  const { ['@odata.etag']: _unpublished, ...body } = doc;
  return { status: 200, body };
}

function post(m: SimModels, req: SimRequest, key: string): SimResponse {
  if (key === m.topology.sessionsKey) {
    if (m.quirks.sessions === 'refused') return redfishError(401, BaseMessages.NoValidSession, 'Session login is not available for this account.');
    if (m.quirks.sessions === 'notFound') return notFound(req.path);
    return m.auth.login(m.store, key, req.body);
  }
  const action = m.topology.actions.get(key);
  const later = (name: string, run: () => SimResponse): SimResponse => (m.quirks.asyncActions ? m.tasks.defer(name, run) : run());
  switch (action?.kind) {
    case 'reset': {
      const system = m.systems.get(action.systemKey);
      return system ? later('Reset', () => system.power.reset(req.body)) : notFound(req.path);
    }
    case 'insertMedia':
      if (m.remoteMedia.hides(action.mediaKey)) return notFound(req.path);
      return later('Insert media', () => m.media.insert(action.mediaKey, req.body));
    case 'ejectMedia':
      if (m.remoteMedia.hides(action.mediaKey)) return notFound(req.path);
      return later('Eject media', () => m.media.eject(action.mediaKey));
    case 'remoteMedia':
      return m.remoteMedia.switch(req.body, action.allowed);
    case 'simpleUpdate':
      return m.tasks.simpleUpdate(req.body);
    case undefined:
      break;
  }
  if (m.topology.volumeCollectionKeys.has(key)) return later('Create volume', () => m.volumes.create(key, req.body));
  return m.store.get(key) ? methodNotAllowed('POST', req.path) : notFound(req.path);
}

function patch(m: SimModels, req: SimRequest, key: string): SimResponse {
  const doc = m.remoteMedia.hides(key) ? undefined : m.store.get(key);
  if (!doc) return notFound(req.path);
  const ifMatch = typeof req.headers['if-match'] === 'string' ? req.headers['if-match'] : undefined;
  if (ifMatch === undefined && m.quirks.ifMatch === 'requiredUnpublished') {
    return redfishError(428, BaseMessages.PreconditionRequired, `An If-Match header is required to modify ${req.path}.`);
  }
  if (!ifMatchOk(ifMatch, doc)) {
    return redfishError(412, BaseMessages.PreconditionFailed, `The ETag supplied did not match the ETag of ${req.path}.`);
  }
  const { topology } = m;
  const system = m.systems.get(key);
  const biosOf = systemWith(m, (s) => s.topology.biosSettingsKey === key || (s.topology.biosSettingsKey === undefined && s.topology.biosKey === key));
  let result: SimResponse;
  if (system) {
    const apply = () => patchSystem(doc, req.body, m.quirks);
    result = m.quirks.bootOverride === 'deferred' && 'Boot' in req.body ? m.tasks.defer('Boot override', apply) : apply();
  } else if (biosOf) result = biosOf.bios.patch(doc, req.body);
  else if (topology.mediaKeys.includes(key)) result = m.media.patch(key, doc, req.body);
  else return methodNotAllowed('PATCH', req.path);
  if (result.status >= 300 || m.quirks.ifMatch === 'requiredUnpublished') return result;
  return { ...result, headers: { ...result.headers, ETag: etagOf(doc) } };
}

function remove(m: SimModels, req: SimRequest, key: string): SimResponse {
  if (!m.store.get(key)) return notFound(req.path);
  const parent = parentKey(key);
  if (parent === m.topology.sessionsKey) return m.auth.logout(m.store, parent, key);
  if (m.topology.volumeCollectionKeys.has(parent))
    return m.quirks.asyncActions ? m.tasks.defer('Delete volume', () => m.volumes.remove(key)) : m.volumes.remove(key);
  return methodNotAllowed('DELETE', req.path);
}

function dispatch(m: SimModels, req: SimRequest, key: string): SimResponse {
  switch (req.method) {
    case 'GET':
    case 'HEAD':
      return get(m, req, key);
    case 'POST':
      return post(m, req, key);
    case 'PATCH':
      return patch(m, req, key);
    case 'DELETE':
      return remove(m, req, key);
    default:
      return methodNotAllowed(req.method, req.path);
  }
}

export function route(m: SimModels, req: SimRequest): SimResponse {
  const { key, method } = req;
  if (key === undefined) {
    if (/^\/redfish\/?$/i.test(req.path) && method === 'GET') return { status: 200, body: { v1: '/redfish/v1/' } };
    return notFound(req.path);
  }
  if (!isOpen(m, method, key) && !m.auth.authorised(req.headers)) {
    const response = redfishError(401, BaseMessages.NoValidSession, 'There is no valid session established with the implementation.');
    return { ...response, headers: { 'WWW-Authenticate': 'Basic realm="bmc-simulator"' } };
  }
  const response = dispatch(m, req, key);
  const allow = allowedMethods(m, key);
  return allow ? { ...response, headers: { ...response.headers, Allow: allow.join(', ') } } : response;
}
