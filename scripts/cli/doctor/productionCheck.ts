import type { Finding } from '../../../schemas/doctor.ts';
import type { Config } from '../../../services/platform/config.ts';
import { finding } from './finding.ts';

/** Whether the bootstrap admin token still opens the API: `unknown` when the doctor held another token or could not ask. */
export type BootstrapTokenState = 'accepted' | 'refused' | 'unknown';

const loopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

/**
 * What a fresh machine runs with and a production deployment must change, each a warning of its own (a dev stack on
 * loopback is allowed to have them): the bootstrap admin token still accepted, an API reachable beyond loopback over
 * plain HTTP (the API does not terminate TLS: a proxy in front does, and `publicUrl` says https), broker mode off.
 */
export function checkProduction(config: Config, bootstrapToken: BootstrapTokenState): Finding[] {
  const findings: Finding[] = [];
  if (bootstrapToken === 'accepted')
    findings.push(
      finding(
        'production',
        'ADMIN_TOKEN_NOT_ROTATED',
        'warning',
        `the bootstrap admin token in ${config.dataDir}/admin.token is still accepted: create named admin tokens (auth.createToken) and revoke bootstrap-admin (auth.revokeToken)`,
      ),
    );
  const publicUrl = config.publicUrl === undefined ? undefined : new URL(config.publicUrl);
  const exposed = !loopback(config.httpHost) || (publicUrl !== undefined && !loopback(publicUrl.hostname));
  if (exposed && publicUrl?.protocol !== 'https:')
    findings.push(
      finding(
        'production',
        'API_TLS_NOT_CONFIGURED',
        'warning',
        `the API is reachable beyond loopback (BC_HTTP_HOST ${config.httpHost}${publicUrl ? `, BC_PUBLIC_URL ${config.publicUrl}` : ''}) without TLS: put a TLS-terminating proxy in front and set BC_PUBLIC_URL to its https:// address`,
        { httpHost: config.httpHost, ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}) },
      ),
    );
  if (config.natsAuth === 'none')
    findings.push(
      finding(
        'production',
        'BROKER_MODE_NOT_CONFIGURED',
        'warning',
        'BC_NATS_AUTH=none: set natsAuth to operator (the default) so the broker enforces per-role permissions',
      ),
    );
  if (findings.length === 0 && bootstrapToken !== 'unknown')
    findings.push(finding('production', 'PRODUCTION_CONFIGURED', 'info', 'admin token rotated, API behind TLS or on loopback only, broker permissions on'));
  return findings;
}
