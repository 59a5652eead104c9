import { resolve } from 'node:path';
import { z } from 'zod';
import { builtinHardwareProfiles, HardwareProfileSpec } from '../../schemas/metal/hardwareProfile.ts';
import { ResourceId } from '../../schemas/ids.ts';
import { ConfigError, type ConfigProblem } from './configError.ts';
import { configFilePath, readConfigFile } from './configFile.ts';
import { readStackRecord } from './stackRecord.ts';

/**
 * `BC_AGENT_RESULTS_MAX_BYTES` unset: 256 MiB of agent results at most. A result is read within moments of being stored
 * (older ones serve only resumed attempts), and nats-server reserves a bounded stream's size from its `max_file_store`
 * (75 % of the free disk by default), so it stays modest.
 */
export const AGENT_RESULTS_MAX_BYTES_DEFAULT = 256 << 20;

/** `BC_LOGS_MAX_AGE_MS` unset: node log lines are kept a week (they explain recent work; the log of record is BC_EVENTS). */
export const LOGS_MAX_AGE_MS_DEFAULT = 7 * 24 * 3600_000;
/** `BC_LOGS_MAX_LINES_PER_SOURCE` unset: one node's lines from one source kept at most (oldest dropped first). */
export const LOGS_MAX_LINES_PER_SOURCE_DEFAULT = 10_000;
/** `BC_LOGS_MAX_BYTES` unset: 256 MiB of node logs in all, reserved from the account's storage like the agent results. */
export const LOGS_MAX_BYTES_DEFAULT = 256 << 20;

/**
 * Runtime configuration: defaults, overridden by an optional file (`BC_CONFIG`, else `better-compute.config.ts` in
 * the working directory, else `<dataDir>/config.json`; see `configFile.ts`), overridden by environment variables. The same code runs on one embedded server or a 3-node cluster
 * (`streamReplicas: 3`).
 */
export const Config = z.object({
  /**
   * An external NATS server. Unset: `npm start` runs its own embedded server on a free port (never whatever answers on
   * :4222) and records it in `<dataDir>/stack.json`, where other processes of that stack find it (`natsUrlOf`).
   */
  natsUrl: z.string().min(1).optional(),
  /**
   * `operator` (default): the server enforces per-role permissions from the trust chain in `brokerDir`
   * (services/trust/broker/); a server that lets anyone connect without credentials is refused. `none`: anonymous
   * connections, only when asked for: a warning at start, on `/readyz` (`BROKER_AUTH_OFF`) and an error in
   * `better-compute doctor`. Anyone who reaches the server then reads every subject and may publish on any.
   */
  natsAuth: z.enum(['operator', 'none']).default('operator'),
  dataDir: z.string().default('./.data'),
  httpPort: z.coerce.number().int().min(0).max(65535).default(8080),
  httpHost: z.string().default('127.0.0.1'),
  /** The API's address as machines and BMCs reach it (step artefact URLs). Default `http://<httpHost>:<httpPort>`. */
  publicUrl: z.string().url().optional(),
  /** Where agents on machines reach NATS (what an installed host's `bcd node` is told). Default `natsUrl`. */
  agentNatsUrl: z.string().optional(),
  streamReplicas: z.coerce.number().int().min(1).max(5).default(1),
  /**
   * Leader lease of the single-active services (`workflow-orchestrator`, `bmc-monitor`, `vps-reconciler`): a standby
   * takes over after the leader went this long without renewing; a leader cut off for this long stops on its own.
   */
  leaseMs: z.coerce.number().int().min(300).max(600_000).default(10_000),
  duplicateWindowMs: z.coerce.number().int().positive().default(120_000),
  /**
   * The most `BC_AGENT_RESULTS` keeps (oldest results dropped first): the result intake stores there only answers to
   * commands that were sent, yet agents (tenants' hosts among them) choose what those answers hold, so it is bounded
   * besides. Reserved from the account's storage when that has a limit.
   */
  agentResultsMaxBytes: z.coerce
    .number()
    .int()
    .min(1 << 20)
    .default(AGENT_RESULTS_MAX_BYTES_DEFAULT),
  /**
   * BC_LOGS retention: agents (tenants' hosts among them) choose what they print, so every bound is the stream's own:
   * an age, lines per node and source (`maxLinesPerSource` × a line of at most `NODE_LOG_MAX_MSG_BYTES` bounds one
   * node's source), and bytes in all.
   */
  logsMaxAgeMs: z.coerce.number().int().min(60_000).default(LOGS_MAX_AGE_MS_DEFAULT),
  logsMaxLinesPerSource: z.coerce.number().int().min(100).default(LOGS_MAX_LINES_PER_SOURCE_DEFAULT),
  logsMaxBytes: z.coerce
    .number()
    .int()
    .min(1 << 20)
    .default(LOGS_MAX_BYTES_DEFAULT),
  /**
   * Operator mode: the JetStream file storage the application account may use in all (its account JWT's
   * `disk_storage`). Unset: no account limit (the server's own `max_file_store` applies).
   */
  jetStreamMaxBytes: z.coerce.number().int().positive().optional(),
  commandRetries: z.coerce.number().int().min(0).max(50).default(5),
  readYourWritesTimeoutMs: z.coerce.number().int().positive().default(5_000),
  /**
   * A node's agent counts as alive (`connected`) while its last verified heartbeat is at most this old; agents beat
   * every 10 s. Also what `fleet-sensors` measures a host's silence from.
   */
  agentPresenceWindowMs: z.coerce.number().int().min(100).default(30_000),
  readyMaxLag: z.coerce.number().int().nonnegative().default(1_000),
  bodyLimitBytes: z.coerce.number().int().positive().default(1_048_576),
  /**
   * How `npm start` groups its services into processes (`services/stack/processLayout.ts`). `compact` (default): the
   * services every step passes through share one process; `split`: every service in a process of its own.
   */
  processLayout: z.enum(['compact', 'split']).default('compact'),
  /** Machines in the simulated site (`npm start` defaults to 4; 0: no simulated site). */
  simMachines: z.coerce.number().int().min(0).max(10_000).default(0),
  simSiteId: z.string().default('sim'),
  simBmcPortBase: z.coerce.number().int().min(0).max(65000).default(18620),
  /** base64 of the 32-byte key that seals secrets; unset: `masterKeyFile`. */
  masterKey: z.string().optional(),
  /** Where the master key lives when `masterKey` is unset (created, mode 0600, if missing). Default `<dataDir>/master.key`. */
  masterKeyFile: z.string().optional(),
  /** base64 of the 32-byte key event batches are authenticated with; unset: `eventKeyFile`. Every process reading or writing `bc.evt.>` needs it. */
  eventKey: z.string().optional(),
  /** Where the event key lives when `eventKey` is unset (created, mode 0600, if missing). Default `<dataDir>/event.key`. */
  eventKeyFile: z.string().optional(),
  /** `required`: every `/v1/*` request needs a bearer token. `off`: no authentication, for a trusted localhost dev setup only. */
  apiAuth: z.enum(['required', 'off']).default('required'),
  /** Requests per minute per token (per client address when unauthenticated); 0 turns rate limiting off. */
  apiRateLimitPerMinute: z.coerce.number().int().min(0).default(6_000),
  /**
   * The broker's trust chain (operator, accounts, join.creds). Default `<dataDir>/broker`. An external server in
   * operator mode must trust this operator (`better-compute broker init` writes its config).
   */
  brokerDir: z.string().optional(),
  /** A `.creds` file this process connects with. Unset in operator mode: issued from the trust chain in `brokerDir`. */
  natsCredsFile: z.string().optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Plugin modules the control plane loads (VPS providers for `vps-reconciler`); `BC_PLUGINS` is comma-separated. */
  plugins: z
    .preprocess(
      (value) =>
        typeof value === 'string'
          ? value
              .split(',')
              .map((p) => p.trim())
              .filter((p) => p !== '')
          : value,
      z.array(z.string().min(1)),
    )
    .default([]),
  /**
   * The hardware profiles this deployment declares, by name: `{ description, drivers: { power, management, boot,
   * deploy } }` (schemas/metal/hardwareProfile.ts). Enrolments and pools name them; a built-in name is refused.
   */
  hardwareProfiles: z
    .record(ResourceId, HardwareProfileSpec)
    .default({})
    .superRefine((profiles, ctx) => {
      for (const builtin of builtinHardwareProfiles)
        if (builtin.id in profiles)
          ctx.addIssue({ code: 'custom', path: [builtin.id], message: `"${builtin.id}" is a built-in hardware profile; use another name` });
    }),
});
export type Config = z.infer<typeof Config>;

const envNames: Record<string, keyof Config> = {
  BC_NATS_URL: 'natsUrl',
  BC_DATA_DIR: 'dataDir',
  BC_NATS_AUTH: 'natsAuth',
  BC_HTTP_PORT: 'httpPort',
  BC_HTTP_HOST: 'httpHost',
  BC_PUBLIC_URL: 'publicUrl',
  BC_AGENT_NATS_URL: 'agentNatsUrl',
  BC_STREAM_REPLICAS: 'streamReplicas',
  BC_LEASE_MS: 'leaseMs',
  BC_DUPLICATE_WINDOW_MS: 'duplicateWindowMs',
  BC_AGENT_RESULTS_MAX_BYTES: 'agentResultsMaxBytes',
  BC_LOGS_MAX_AGE_MS: 'logsMaxAgeMs',
  BC_LOGS_MAX_LINES_PER_SOURCE: 'logsMaxLinesPerSource',
  BC_LOGS_MAX_BYTES: 'logsMaxBytes',
  BC_JETSTREAM_MAX_BYTES: 'jetStreamMaxBytes',
  BC_COMMAND_RETRIES: 'commandRetries',
  BC_AGENT_PRESENCE_WINDOW_MS: 'agentPresenceWindowMs',
  BC_READY_MAX_LAG: 'readyMaxLag',
  BC_LOG_LEVEL: 'logLevel',
  BC_BROKER_DIR: 'brokerDir',
  BC_NATS_CREDS: 'natsCredsFile',
  BC_API_AUTH: 'apiAuth',
  BC_API_RATE_LIMIT_PER_MINUTE: 'apiRateLimitPerMinute',
  BC_PROCESS_LAYOUT: 'processLayout',
  BC_SIM_MACHINES: 'simMachines',
  BC_SIM_SITE_ID: 'simSiteId',
  BC_SIM_BMC_PORT_BASE: 'simBmcPortBase',
  BC_MASTER_KEY: 'masterKey',
  BC_MASTER_KEY_FILE: 'masterKeyFile',
  BC_EVENT_KEY: 'eventKey',
  BC_EVENT_KEY_FILE: 'eventKeyFile',
  BC_PLUGINS: 'plugins',
};

/**
 * Settings that no longer exist, with what replaced them. Refused rather than ignored: silently dropping an auth
 * setting would change a deployment's security without a word.
 */
const retiredSettings = [
  { env: 'BC_BROKER_AUTH', key: 'brokerAuth', replacement: 'BC_NATS_AUTH / natsAuth (operator | none)' },
  { env: 'BC_NATS_EMBEDDED', key: 'natsEmbedded', replacement: 'leaving BC_NATS_URL / natsUrl unset (the embedded server is the default)' },
] as const;

/**
 * The NATS server this process uses: `natsUrl`, else the embedded server the running `npm start` of this data dir
 * recorded. Throws NATS_URL_UNKNOWN when there is neither.
 */
export function natsUrlOf(config: Pick<Config, 'natsUrl' | 'dataDir'>): string {
  if (config.natsUrl !== undefined) return config.natsUrl;
  const record = readStackRecord(config.dataDir);
  if (!record)
    throw new ConfigError('NATS_URL_UNKNOWN', `BC_NATS_URL is unset and no running stack recorded its server in ${resolve(config.dataDir, 'stack.json')}`);
  return record.natsUrl;
}

/** Where machines reach the API: `publicUrl`, else the address it listens on. */
export const publicUrlOf = (config: Config) => config.publicUrl ?? `http://${config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost}:${config.httpPort}`;

/** Broker material (operator, accounts, join.creds): `brokerDir`, else `<dataDir>/broker`. */
export const brokerDirOf = (config: Config) => config.brokerDir ?? resolve(config.dataDir, 'broker');

/** How agents on machines reach the platform; with broker auth they first fetch the public join credential from the API. */
export const agentEndpointsOf = (config: Config) => ({
  natsUrl: config.agentNatsUrl ?? natsUrlOf(config),
  ...(config.natsAuth === 'operator' ? { joinCredsUrl: `${publicUrlOf(config)}/v1/join-creds` } : {}),
});

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const fromEnv: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(envNames)) if (env[name] !== undefined && env[name] !== '') fromEnv[key] = env[name];
  const dataDir = overrides.dataDir ?? (typeof fromEnv.dataDir === 'string' ? fromEnv.dataDir : './.data');
  const file = configFilePath(env, dataDir);
  const fromFile = file === undefined ? {} : readConfigFile(file);
  for (const retired of retiredSettings) {
    const given = env[retired.env] !== undefined && env[retired.env] !== '' ? retired.env : retired.key in fromFile ? `${retired.key} in ${file}` : undefined;
    if (given) throw new ConfigError('RETIRED_SETTING', `${given} is no longer read; use ${retired.replacement}`);
  }
  const envNameOf = (key: PropertyKey) => Object.entries(envNames).find(([, k]) => k === key)?.[0];
  // A misspelt key in a file would otherwise be dropped without a word, and its default silently used.
  const problems: ConfigProblem[] = Object.keys(fromFile)
    .filter((key) => !(key in Config.shape))
    .map((key) => ({ path: key, message: `not a setting (in ${file})` }));
  const parsed = Config.safeParse({ ...fromFile, ...fromEnv, ...overrides });
  if (parsed.success && problems.length === 0) return parsed.data;
  for (const issue of parsed.error?.issues ?? []) {
    const key = issue.path[0];
    const env = key === undefined ? undefined : envNameOf(key);
    const fromEnvironment = env !== undefined && key !== undefined && String(key) in fromEnv;
    problems.push({ path: issue.path.join('.') || 'config', ...(fromEnvironment ? { env } : {}), message: issue.message });
  }
  const listed = problems.map((p) => `${p.env ? `${p.env} (${p.path})` : p.path}: ${p.message}`);
  throw new ConfigError('INVALID_SETTING', `invalid configuration${file ? ` (file ${file})` : ''}: ${listed.join('; ')}`, { problems });
}
