import { describe, expect, it } from 'vitest';
import { natsServers } from '../../services/platform/nats/serverList.ts';
import { renderClusterBlock } from '../../services/trust/broker/serverConfig.ts';
import { thrownCode } from '../support/thrownCode.ts';

describe('BC_NATS_URL as a server list', () => {
  it('splits a comma-separated list of nodes and keeps a single url as it is', () => {
    expect(natsServers('nats://127.0.0.1:4222')).toEqual(['nats://127.0.0.1:4222']);
    expect(natsServers(' nats://a:4222, nats://b:4223 ,nats://c:4224,')).toEqual(['nats://a:4222', 'nats://b:4223', 'nats://c:4224']);
    expect(natsServers('127.0.0.1:4222,tls://n2.example:4222')).toEqual(['127.0.0.1:4222', 'tls://n2.example:4222']);
  });

  it('refuses an empty list and entries that are not NATS urls, with a stable code', () => {
    expect(thrownCode(() => natsServers(' , '))).toBe('VALIDATION_FAILED');
    expect(thrownCode(() => natsServers('nats://a:4222,http://b:80'))).toBe('VALIDATION_FAILED');
    expect(thrownCode(() => natsServers('nats://a:4222,nats://'))).toBe('VALIDATION_FAILED');
  });
});

describe('a cluster node config', () => {
  it('names the cluster, its route listener and the other nodes', () => {
    expect(renderClusterBlock({ name: 'bc', host: '127.0.0.1', port: 6222, routes: ['nats-route://127.0.0.1:6223', 'nats-route://127.0.0.1:6224'] })).toEqual([
      'cluster: {',
      '  name: "bc"',
      '  listen: "127.0.0.1:6222"',
      '  routes: ["nats-route://127.0.0.1:6223", "nats-route://127.0.0.1:6224"]',
      '}',
    ]);
  });
});
