import type { IncomingHttpHeaders } from 'node:http';

import { codeForStatus, RedfishError } from './errors.ts';
import { arr, isObject, linkOf, obj, str, type Json } from './json.ts';
import type { RawResponse, Transport } from './transport.ts';

export const serviceRootPath = '/redfish/v1/';
// DSP0266 fixes this URI; used only if the service root omits Links.Sessions.
const specSessionsPath = '/redfish/v1/SessionService/Sessions';

/**
 * `auto`: a session when the service root offers a SessionService, HTTP Basic otherwise, and Basic again when the
 * session login answers 401, 404 or 405 (emulators, BMCs with sessions switched off). `session` and `basic` force one.
 */
export type RedfishAuthMode = 'auto' | 'basic' | 'session';

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

type Scheme = { kind: 'basic' } | { kind: 'session'; token: string; location: string | undefined };

export function createRedfishHttp(transport: Transport, credentials: { username: string; password: string; auth: RedfishAuthMode }): RedfishHttp {
  const basic = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  let scheme: Promise<Scheme> | undefined;
  const fallsBack = credentials.auth === 'auto';

  const establish = async (): Promise<Scheme> => {
    if (credentials.auth === 'basic') return { kind: 'basic' };
    const root = await transport({ method: 'GET', path: serviceRootPath, headers: {} });
    // A root that wants credentials tells nothing about sessions: Basic is the scheme every service must take.
    if (fallsBack && root.status === 401) return { kind: 'basic' };
    if (root.status >= 300) throw failure('GET', serviceRootPath, root);
    const sessionsLink = linkOf(root.body, 'Links', 'Sessions');
    if (fallsBack && sessionsLink === undefined && linkOf(root.body, 'SessionService') === undefined) return { kind: 'basic' };
    const sessionsPath = toPath(sessionsLink ?? specSessionsPath);
    const res = await transport({
      method: 'POST',
      path: sessionsPath,
      headers: {},
      body: { UserName: credentials.username, Password: credentials.password },
    });
    if (fallsBack && [401, 404, 405].includes(res.status)) return { kind: 'basic' };
    if (res.status >= 300) throw failure('POST', sessionsPath, res);
    const token = header(res.headers, 'x-auth-token');
    if (!token) {
      if (fallsBack) return { kind: 'basic' };
      throw new RedfishError('REDFISH_AUTH', `POST ${sessionsPath} returned no X-Auth-Token`, { status: res.status });
    }
    const location = header(res.headers, 'location') ?? str(obj(res.body)['@odata.id']);
    return { kind: 'session', token, location: location === undefined ? undefined : toPath(location) };
  };

  const authHeaders = async (): Promise<Record<string, string>> => {
    scheme ??= establish().catch((error: unknown) => {
      scheme = undefined;
      throw error;
    });
    const current = await scheme;
    return current.kind === 'basic' ? { Authorization: basic } : { 'X-Auth-Token': current.token };
  };

  const exchange = async (method: string, uri: string, body?: Json, extra: Record<string, string> = {}): Promise<RawResponse> => {
    const path = toPath(uri);
    const attempt = async (): Promise<RawResponse> => transport({ method, path, headers: { ...(await authHeaders()), ...extra }, body });
    let res = await attempt();
    // Sessions expire (iLO after 30 idle minutes); one fresh login is the documented recovery.
    if (res.status === 401 && (await scheme)?.kind === 'session') {
      scheme = undefined;
      res = await attempt();
    }
    // A 3xx here is a redirect the transport would not follow (another host, or plain http).
    if (res.status >= 300) throw failure(method, path, res);
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
      const current = await scheme?.catch(() => undefined);
      scheme = undefined;
      if (current?.kind !== 'session' || !current.location) return;
      const { token, location } = current;
      // Best effort: a BMC has few session slots, but failing to free one must not fail the caller.
      await transport({ method: 'DELETE', path: location, headers: { 'X-Auth-Token': token } }).catch(() => undefined);
    },
  };
}
