import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

import { BaseMessages, redfishError, type SimResponse } from './responses.ts';
import { addMember, childUri, removeMember, type Json, type TreeStore } from './treeStore.ts';

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** HTTP Basic plus SessionService tokens, the two schemes DSP0266 requires a service to offer. */
export class AuthGate {
  private readonly tokens = new Map<string, string>(); // X-Auth-Token -> session key
  private nextId = 1;

  constructor(
    private readonly username: string,
    private readonly password: string,
  ) {}

  credentialsOk(user: unknown, pass: unknown): boolean {
    return typeof user === 'string' && typeof pass === 'string' && sameText(user, this.username) && sameText(pass, this.password);
  }

  authorised(headers: IncomingHttpHeaders): boolean {
    const token = headers['x-auth-token'];
    if (typeof token === 'string') return this.tokens.has(token);
    const basic = /^Basic\s+(\S+)$/i.exec(headers.authorization ?? '');
    if (!basic?.[1]) return false;
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon > 0 && this.credentialsOk(decoded.slice(0, colon), decoded.slice(colon + 1));
  }

  get sessionCount(): number {
    return this.tokens.size;
  }

  /** POST to the Sessions collection: the one write a client may make without being authenticated. */
  login(store: TreeStore, sessionsKey: string, body: Json): SimResponse {
    if (!this.credentialsOk(body.UserName, body.Password)) {
      return redfishError(401, BaseMessages.NoValidSession, 'Invalid user name or password.');
    }
    const collection = store.get(sessionsKey);
    if (!collection) return redfishError(404, BaseMessages.ResourceNotFound, 'Sessions collection missing.');
    const id = `sim${String(this.nextId++).padStart(4, '0')}${randomBytes(4).toString('hex')}`;
    const uri = childUri(collection, sessionsKey, id);
    const key = `${sessionsKey}/${id.toLowerCase()}`;
    const session: Json = {
      '@odata.id': uri,
      '@odata.type': '#Session.v1_0_0.Session',
      Id: id,
      Name: 'User Session',
      UserName: body.UserName,
    };
    store.put(key, session);
    addMember(collection, uri);
    const token = randomBytes(16).toString('hex');
    this.tokens.set(token, key);
    return { status: 201, body: session, headers: { 'X-Auth-Token': token, Location: uri } };
  }

  /** DELETE of a session resource: ends it, so its token stops working at once. */
  logout(store: TreeStore, sessionsKey: string, key: string): SimResponse {
    for (const [token, sessionKey] of this.tokens) if (sessionKey === key) this.tokens.delete(token);
    const collection = store.get(sessionsKey);
    if (collection) removeMember(collection, key);
    store.remove(key);
    return { status: 204 };
  }
}
