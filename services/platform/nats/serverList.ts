import { PlatformError } from '../../../schemas/platformError.ts';

/**
 * The servers a NATS url setting names: one url, or several separated by commas (the nodes of a cluster, e.g.
 * `nats://127.0.0.1:4222,nats://127.0.0.1:4223`). A client given several picks one and fails over to the others;
 * the server also tells it the cluster's other members.
 */
export function natsServers(url: string): string[] {
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (servers.length === 0) throw new PlatformError('VALIDATION_FAILED', `no NATS server in ${JSON.stringify(url)}`);
  for (const server of servers) {
    const withScheme = /^[a-z]+:\/\//i.test(server) ? server : `nats://${server}`;
    let parsed: URL;
    try {
      parsed = new URL(withScheme);
    } catch (err) {
      throw new PlatformError('VALIDATION_FAILED', `${JSON.stringify(server)} is not a NATS server url`, { cause: err });
    }
    if (!['nats:', 'tls:', 'ws:', 'wss:'].includes(parsed.protocol) || parsed.hostname === '') {
      throw new PlatformError('VALIDATION_FAILED', `${JSON.stringify(server)} is not a NATS server url`);
    }
  }
  return servers;
}
