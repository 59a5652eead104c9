import type { Finding } from '../../../schemas/doctor.ts';
import { loadConfig, type Config } from '../../../services/platform/config.ts';
import { ConfigError } from '../../../services/platform/configError.ts';
import { configFilePath } from '../../../services/platform/configFile.ts';
import { finding } from './finding.ts';

/** Loads the configuration the stack would load from this environment; a failure is the first error to fix. */
export function checkConfig(env: NodeJS.ProcessEnv): { config?: Config; findings: Finding[] } {
  try {
    const config = loadConfig(env);
    const file = configFilePath(env, config.dataDir);
    return {
      config,
      findings: [
        finding('config', 'CONFIG_OK', 'info', `configuration loads (data dir ${config.dataDir}${file ? `, file ${file}` : ''})`, {
          dataDir: config.dataDir,
          natsAuth: config.natsAuth,
          ...(file ? { file } : {}),
        }),
      ],
    };
  } catch (err) {
    // Every bad setting with its path, so a tool can point at each one.
    const detail = err instanceof ConfigError ? { reason: err.reason, ...(err.problems.length > 0 ? { problems: err.problems } : {}) } : undefined;
    return { findings: [finding('config', 'CONFIG_INVALID', 'error', `the configuration does not load: ${(err as Error).message}`, detail)] };
  }
}
