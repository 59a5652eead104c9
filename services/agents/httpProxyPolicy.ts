import { isIPv4 } from 'node:net';
import type { HttpProxyRequest } from '../../schemas/agent/httpProxy.ts';
import { TerminalError } from '../../plugins/sdk/stepErrors.ts';

/**
 * Headers a caller may not set: they belong to the transport (framing, routing, connection reuse), so setting them
 * could split or redirect the request.
 */
const forbiddenHeaders = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'keep-alive',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'x-forwarded-for',
  'x-forwarded-host',
  'forwarded',
]);

/** Credentials: allowed only as `secretHeaders`, resolved by the agent from a reference. */
const credentialHeaders = new Set(['authorization', 'cookie']);

export interface ProxyTarget {
  /** The node's recorded addresses: the only hosts its requests may name. */
  readonly addresses: readonly string[];
  /** The site's provisioning networks: the only place plain http is allowed. */
  readonly provisioningCidrs: readonly string[];
}

const refuse = (why: string) => new TerminalError('PROXY_REFUSED', `site.httpProxy refused: ${why}`);

/**
 * The SSRF bound of `httpViaSite`, checked before any command exists: a step can make the site agent talk only to
 * the node it works on, by IP literal, with https (pinned) unless the address is on a provisioning network.
 */
export function checkProxyRequest(request: HttpProxyRequest, target: ProxyTarget): void {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw refuse('the url does not parse');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(`scheme ${url.protocol} is not http(s)`);
  if (url.username || url.password) throw refuse('credentials in the url; use secretHeaders');
  const host = url.hostname;
  if (!isIPv4(host)) throw refuse(`host ${host} is not an IPv4 literal (host names could resolve anywhere)`);
  if (!target.addresses.includes(host)) throw refuse(`host ${host} is not an address recorded for this node`);
  if (url.protocol === 'http:' && !target.provisioningCidrs.some((cidr) => inCidr(host, cidr))) {
    throw refuse(`plain http to ${host}, which is outside the site's provisioning networks`);
  }
  if (url.protocol === 'https:' && !request.tlsSpkiSha256) throw refuse('https needs tlsSpkiSha256 (the machine certificate is pinned, not trusted)');
  for (const name of Object.keys(request.headers)) {
    const lower = name.toLowerCase();
    if (credentialHeaders.has(lower)) throw refuse(`header ${name} carries a credential; send it as a secretHeader`);
    if (forbiddenHeaders.has(lower)) throw refuse(`header ${name} may not be set`);
  }
  for (const name of Object.keys(request.secretHeaders)) {
    if (forbiddenHeaders.has(name.toLowerCase())) throw refuse(`header ${name} may not be set`);
  }
  if (request.body !== undefined && request.method === 'GET') throw refuse('a GET carries no body');
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const toInt = (a: string) => a.split('.').reduce((n, octet) => (n << 8) + Number(octet), 0) >>> 0;
  const prefix = Number(bits);
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (toInt(ip) & mask) >>> 0 === (toInt(base!) & mask) >>> 0;
}
