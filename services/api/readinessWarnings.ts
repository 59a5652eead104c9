import type { ReadinessWarning } from '../../schemas/health.ts';
import type { Config } from '../platform/config.ts';

/** The warnings `/readyz` carries for this configuration: each insecure mode the stack was told to run in. */
export function readinessWarnings(config: Pick<Config, 'natsAuth' | 'apiAuth'>): ReadinessWarning[] {
  const warnings: ReadinessWarning[] = [];
  if (config.natsAuth === 'none') {
    warnings.push({ code: 'BROKER_AUTH_OFF', message: 'BC_NATS_AUTH=none: anyone who reaches the NATS server reads every subject and may publish on any' });
  }
  if (config.apiAuth === 'off') warnings.push({ code: 'API_AUTH_OFF', message: 'BC_API_AUTH=off: every HTTP caller is an anonymous admin' });
  return warnings;
}
