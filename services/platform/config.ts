import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';

/**
 * Runtime configuration: defaults, overridden by an optional JSON file (`BC_CONFIG`, or `<dataDir>/config.json`),
 * overridden by environment variables. The same code runs on one embedded server or a 3-node cluster
 * (`streamReplicas: 3`).
 */
export const Config = z.object({
  natsUrl: z.string().default('nats://127.0.0.1:4222'),
  /** True when BC_NATS_URL was set explicitly: then an unreachable server is an error, not a cue to embed one. */
  natsUrlExplicit: z.boolean().default(false),
  /** Always run the embedded nats-server, even when BC_NATS_URL answers (e.g. a system server you want left alone). */
  natsEmbedded: z.stringbool().default(false),
  dataDir: z.string().default('./.data'),
  httpPort: z.coerce.number().int().min(0).max(65535).default(8080),
  httpHost: z.string().default('127.0.0.1'),
  /** The API's address as machines and BMCs reach it (step artefact URLs). Default `http://<httpHost>:<httpPort>`. */
  publicUrl: z.string().url().optional(),
  /** Where agents on machines reach NATS (what an installed host's `bcd node` is told). Default `natsUrl`. */
  agentNatsUrl: z.string().optional(),
  streamReplicas: z.coerce.number().int().min(1).max(5).default(1),
  duplicateWindowMs: z.coerce.number().int().positive().default(120_000),
  commandRetries: z.coerce.number().int().min(0).max(50).default(5),
  readYourWritesTimeoutMs: z.coerce.number().int().positive().default(5_000),
  readyMaxLag: z.coerce.number().int().nonnegative().default(1_000),
  bodyLimitBytes: z.coerce.number().int().positive().default(1_048_576),
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
   * `operator`: nats-server enforces per-role permissions (services/trust/broker/); `npm start` defaults to it with the
   * embedded server. `off`: anonymous connections, as with a server named by BC_NATS_URL. Unset: `npm start` decides.
   */
  brokerAuth: z.enum(['operator', 'off']).optional(),
  /** Broker material (operator, accounts, join.creds). Default `<dataDir>/broker`. */
  brokerDir: z.string().optional(),
  /** A `.creds` file this process connects with (control-plane services in operator mode). */
  natsCredsFile: z.string().optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Plugin modules the control plane loads (VPS providers for `vps-reconciler`); `BC_PLUGINS` is comma-separated. */
  plugins: z
    .preprocess((value) => (typeof value === 'string' ? value.split(',').map((p) => p.trim()).filter((p) => p !== '') : value), z.array(z.string().min(1)))
    .default([]),
});
export type Config = z.infer<typeof Config>;

const envNames: Record<string, keyof Config> = {
  BC_NATS_URL: 'natsUrl',
  BC_DATA_DIR: 'dataDir',
  BC_NATS_EMBEDDED: 'natsEmbedded',
  BC_HTTP_PORT: 'httpPort',
  BC_HTTP_HOST: 'httpHost',
  BC_PUBLIC_URL: 'publicUrl',
  BC_AGENT_NATS_URL: 'agentNatsUrl',
  BC_STREAM_REPLICAS: 'streamReplicas',
  BC_DUPLICATE_WINDOW_MS: 'duplicateWindowMs',
  BC_COMMAND_RETRIES: 'commandRetries',
  BC_LOG_LEVEL: 'logLevel',
  BC_BROKER_AUTH: 'brokerAuth',
  BC_BROKER_DIR: 'brokerDir',
  BC_NATS_CREDS: 'natsCredsFile',
  BC_API_AUTH: 'apiAuth',
  BC_API_RATE_LIMIT_PER_MINUTE: 'apiRateLimitPerMinute',
  BC_SIM_MACHINES: 'simMachines',
  BC_SIM_SITE_ID: 'simSiteId',
  BC_SIM_BMC_PORT_BASE: 'simBmcPortBase',
  BC_MASTER_KEY: 'masterKey',
  BC_MASTER_KEY_FILE: 'masterKeyFile',
  BC_EVENT_KEY: 'eventKey',
  BC_EVENT_KEY_FILE: 'eventKeyFile',
  BC_PLUGINS: 'plugins',
};

/** Where machines reach the API: `publicUrl`, else the address it listens on. */
export const publicUrlOf = (config: Config) => config.publicUrl ?? `http://${config.httpHost === '0.0.0.0' ? '127.0.0.1' : config.httpHost}:${config.httpPort}`;

/** Broker material (operator, accounts, join.creds): `brokerDir`, else `<dataDir>/broker`. */
export const brokerDirOf = (config: Config) => config.brokerDir ?? resolve(config.dataDir, 'broker');

/** How agents on machines reach the platform; with broker auth they first fetch the public join credential from the API. */
export const agentEndpointsOf = (config: Config) => ({
  natsUrl: config.agentNatsUrl ?? config.natsUrl,
  ...(config.brokerAuth === 'operator' ? { joinCredsUrl: `${publicUrlOf(config)}/v1/join-creds` } : {}),
});

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const fromEnv: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(envNames)) if (env[name] !== undefined && env[name] !== '') fromEnv[key] = env[name];
  if (fromEnv.natsUrl !== undefined) fromEnv.natsUrlExplicit = true;
  const dataDir = String(overrides.dataDir ?? fromEnv.dataDir ?? './.data');
  const file = env.BC_CONFIG ?? resolve(dataDir, 'config.json');
  const fromFile = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  if (env.BC_CONFIG && !existsSync(env.BC_CONFIG)) throw new Error(`BC_CONFIG names ${env.BC_CONFIG}, which does not exist`);
  return Config.parse({ ...fromFile, ...fromEnv, ...overrides });
}
