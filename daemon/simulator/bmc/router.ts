import type { IncomingHttpHeaders } from 'node:http';

import type { AuthGate } from './auth.ts';
import type { BiosModel } from './bios.ts';
import { patchSystem } from './boot.ts';
import type { VirtualMediaModel } from './media.ts';
import type { PowerModel } from './power.ts';
import { BaseMessages, methodNotAllowed, notFound, redfishError, type SimResponse } from './responses.ts';
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
  auth: AuthGate;
  power: PowerModel;
  media: VirtualMediaModel;
  bios: BiosModel;
  tasks: TaskModel;
  volumes: VolumeModel;
}

function isOpen(m: SimModels, method: string, key: string): boolean {
  // Real BMCs serve the service root without credentials (clients need it to find the SessionService),
  // and creating a session is how a client authenticates in the first place.
  return (method === 'GET' && key === '') || (method === 'POST' && key === m.topology.sessionsKey);
}

function get(m: SimModels, req: SimRequest, key: string): SimResponse {
  const doc = m.store.get(key);
  return doc ? { status: 200, body: doc, headers: { ETag: etagOf(doc) } } : notFound(req.path);
}

function post(m: SimModels, req: SimRequest, key: string): SimResponse {
  if (key === m.topology.sessionsKey) return m.auth.login(m.store, key, req.body);
  const action = m.topology.actions.get(key);
  switch (action?.kind) {
    case 'reset':
      return m.power.reset(req.body);
    case 'insertMedia':
      return m.media.insert(action.mediaKey, req.body);
    case 'ejectMedia':
      return m.media.eject(action.mediaKey);
    case 'simpleUpdate':
      return m.tasks.simpleUpdate(req.body);
    case undefined:
      break;
  }
  if (m.topology.volumeCollectionKeys.has(key)) return m.volumes.create(key, req.body);
  return m.store.get(key) ? methodNotAllowed('POST', req.path) : notFound(req.path);
}

function patch(m: SimModels, req: SimRequest, key: string): SimResponse {
  const doc = m.store.get(key);
  if (!doc) return notFound(req.path);
  const ifMatch = req.headers['if-match'];
  if (!ifMatchOk(typeof ifMatch === 'string' ? ifMatch : undefined, doc)) {
    return redfishError(412, BaseMessages.PreconditionFailed, `The ETag supplied did not match the ETag of ${req.path}.`);
  }
  const { topology } = m;
  let result: SimResponse;
  if (key === topology.systemKey) result = patchSystem(doc, req.body);
  else if (key === topology.biosSettingsKey) result = m.bios.patch(doc, req.body);
  else if (key === topology.biosKey && topology.biosSettingsKey === undefined) result = m.bios.patch(doc, req.body);
  else if (topology.mediaKeys.includes(key)) result = m.media.patch(key, doc, req.body);
  else return methodNotAllowed('PATCH', req.path);
  return result.status < 300 ? { ...result, headers: { ...result.headers, ETag: etagOf(doc) } } : result;
}

function remove(m: SimModels, req: SimRequest, key: string): SimResponse {
  if (!m.store.get(key)) return notFound(req.path);
  const parent = parentKey(key);
  if (parent === m.topology.sessionsKey) return m.auth.logout(m.store, parent, key);
  if (m.topology.volumeCollectionKeys.has(parent)) return m.volumes.remove(key);
  return methodNotAllowed('DELETE', req.path);
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
  switch (method) {
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
      return methodNotAllowed(method, req.path);
  }
}
