import type { IncomingHttpHeaders } from 'node:http';

import { codeForStatus, RedfishError } from './errors.ts';
import { arr, isObject, linkOf, obj, str, type Json } from './json.ts';
import type { RawResponse, Transport } from './transport.ts';

export const serviceRootPath = '/redfish/v1/';
// DSP0266 fixes this URI; used only if the service root omits Links.Sessions.
const specSessionsPath = '/redfish/v1/SessionService/Sessions';

export type RedfishAuthMode = 'basic' | 'session';

export interface RedfishResource {
  uri: string;
  /** 200 normally; 202 from a task monitor whose task is still running. */
  status: number;
  body: Json;
  /** From the ETag header, else `@odata.etag`: what If-Match must echo. */
  etag: string | undefined;
}

export interface RedfishReply {
  status: number;
  body: Json;
  headers: IncomingHttpHeaders;
  /** Location header reduced to a path on this BMC. */
  location: string | undefined;
}

export interface RedfishHttp {
  get(uri: string): Promise<RedfishResource>;
  send(method: 'POST' | 'PATCH' | 'DELETE', uri: string, body?: Json, ifMatch?: string): Promise<RedfishReply>;
  close(): Promise<void>;
}

/**
 * Reduces any link the BMC hands out to a path on the configured origin. Links in BMC data may be absolute and
 * name other hosts (a NAT'd BMC reports its internal address): the client only ever dials `baseUrl`.
 */
export function toPath(uri: string): string {
  const url = new URL(uri, 'http://bmc.invalid/redfish/v1/');
  return `${url.pathname}${url.search}`;
}

function messageIds(body: unknown): string[] {
  const error = obj(obj(body).error);
  const ids = arr(error['@Message.ExtendedInfo']).map((m) => str(obj(m).MessageId));
  const code = str(error.code);
  return [...new Set([...(code ? [code] : []), ...ids].filter((id): id is string => id !== undefined))];
}

export function failure(method: string, path: string, res: RawResponse): RedfishError {
  const ids = messageIds(res.body);
  const detail = ids.length > 0 ? ` (${ids.join(', ')})` : '';
  return new RedfishError(codeForStatus(res.status), `${method} ${path} failed: HTTP ${res.status}${detail}`, {
    status: res.status,
    messageIds: ids,
  });
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function createRedfishHttp(
  transport: Transport,
  credentials: { username: string; password: string; auth: RedfishAuthMode },
): RedfishHttp {
  const basic = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  let session: Promise<{ token: string; location: string | undefined }> | undefined;

  const login = async (): Promise<{ token: string; location: string | undefined }> => {
    const root = await transport({ method: 'GET', path: serviceRootPath, headers: {} });
    if (root.status >= 400) throw failure('GET', serviceRootPath, root);
    const sessionsPath = toPath(linkOf(root.body, 'Links', 'Sessions') ?? specSessionsPath);
    const res = await transport({
      method: 'POST',
      path: sessionsPath,
      headers: {},
      body: { UserName: credentials.username, Password: credentials.password },
    });
    if (res.status >= 400) throw failure('POST', sessionsPath, res);
    const token = header(res.headers, 'x-auth-token');
    if (!token) throw new RedfishError('REDFISH_AUTH', `POST ${sessionsPath} returned no X-Auth-Token`, { status: res.status });
    const location = header(res.headers, 'location') ?? str(obj(res.body)['@odata.id']);
    return { token, location: location === undefined ? undefined : toPath(location) };
  };

  const authHeaders = async (): Promise<Record<string, string>> => {
    if (credentials.auth === 'basic') return { Authorization: basic };
    session ??= login().catch((error: unknown) => {
      session = undefined;
      throw error;
    });
    return { 'X-Auth-Token': (await session).token };
  };

  const exchange = async (method: string, uri: string, body?: Json, extra: Record<string, string> = {}): Promise<RawResponse> => {
    const path = toPath(uri);
    const attempt = async (): Promise<RawResponse> => transport({ method, path, headers: { ...(await authHeaders()), ...extra }, body });
    let res = await attempt();
    // Sessions expire (iLO after 30 idle minutes); one fresh login is the documented recovery.
    if (res.status === 401 && credentials.auth === 'session') {
      session = undefined;
      res = await attempt();
    }
    if (res.status >= 400) throw failure(method, path, res);
    return res;
  };

  return {
    async get(uri) {
      const res = await exchange('GET', uri);
      const body = isObject(res.body) ? res.body : {};
      return { uri: toPath(uri), status: res.status, body, etag: header(res.headers, 'etag') ?? str(body['@odata.etag']) };
    },
    async send(method, uri, body, ifMatch) {
      const res = await exchange(method, uri, body, ifMatch === undefined ? {} : { 'If-Match': ifMatch });
      const location = header(res.headers, 'location');
      return {
        status: res.status,
        body: isObject(res.body) ? res.body : {},
        headers: res.headers,
        location: location === undefined ? undefined : toPath(location),
      };
    },
    async close() {
      const current = session;
      session = undefined;
      if (!current) return;
      const { token, location } = await current.catch(() => ({ token: undefined, location: undefined }));
      if (!token || !location) return;
      // Best effort: a BMC has few session slots, but failing to free one must not fail the caller.
      await transport({ method: 'DELETE', path: location, headers: { 'X-Auth-Token': token } }).catch(() => undefined);
    },
  };
}
