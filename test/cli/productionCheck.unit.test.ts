import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { checkProduction } from '../../scripts/cli/doctor/productionCheck.ts';

const configOf = (env: Record<string, string>) => loadConfig({ BC_DATA_DIR: '/nonexistent-bc-data', ...env });
const codes = (env: Record<string, string>, token: Parameters<typeof checkProduction>[1]) => checkProduction(configOf(env), token).map((f) => f.code);

describe('doctor: what a production deployment must set', () => {
  it('flags a fresh machine: bootstrap token live, API on every interface over HTTP, broker mode off', () => {
    expect(codes({ BC_HTTP_HOST: '0.0.0.0', BC_NATS_AUTH: 'none' }, 'accepted')).toEqual([
      'ADMIN_TOKEN_NOT_ROTATED',
      'API_TLS_NOT_CONFIGURED',
      'BROKER_MODE_NOT_CONFIGURED',
    ]);
    expect(checkProduction(configOf({ BC_HTTP_HOST: '0.0.0.0' }), 'accepted').every((f) => f.severity === 'warning')).toBe(true);
  });

  it('counts a public http:// URL as no TLS, even when the API itself listens on loopback', () => {
    expect(codes({ BC_PUBLIC_URL: 'http://bc.example.net' }, 'refused')).toEqual(['API_TLS_NOT_CONFIGURED']);
    expect(codes({ BC_HTTP_HOST: '10.0.0.5', BC_PUBLIC_URL: 'https://bc.example.net' }, 'refused')).toEqual(['PRODUCTION_CONFIGURED']);
  });

  it('says production is configured only when it knows the bootstrap token is no longer accepted', () => {
    expect(codes({}, 'refused')).toEqual(['PRODUCTION_CONFIGURED']);
    expect(codes({}, 'unknown')).toEqual([]);
  });
});
