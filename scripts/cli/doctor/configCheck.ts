import type { Finding } from '../../../schemas/doctor.ts';
import { loadConfig, type Config } from '../../../services/platform/config.ts';
import { finding } from './finding.ts';

/** Loads the configuration the stack would load from this environment; a failure is the first error to fix. */
export function checkConfig(env: NodeJS.ProcessEnv): { config?: Config; findings: Finding[] } {
  try {
    const config = loadConfig(env);
    return {
      config,
      findings: [
        finding('config', 'CONFIG_OK', 'info', `configuration loads (data dir ${config.dataDir})`, { dataDir: config.dataDir, natsAuth: config.natsAuth }),
      ],
    };
  } catch (err) {
    const reason = (err as { reason?: string }).reason;
    return {
      findings: [finding('config', 'CONFIG_INVALID', 'error', `the configuration does not load: ${(err as Error).message}`, reason ? { reason } : undefined)],
    };
  }
}
