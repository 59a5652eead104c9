import { z } from 'zod';

/** How bad a finding is: `error` makes `better-compute doctor` exit non-zero; `warning` needs attention; `info` is a passed check. */
export const FindingSeverity = z.enum(['error', 'warning', 'info']);
export type FindingSeverity = z.infer<typeof FindingSeverity>;

/** What `better-compute doctor` checks, in the order it reports them. */
export const DoctorCheck = z.enum([
  'config',
  'nats',
  'broker',
  'jetstream',
  'streams',
  'api',
  'readModels',
  'siteAgents',
  'bmc',
  /** Pools and nodes name hardware profiles someone declares (built in, config, plugin). */
  'hardwareProfiles',
  'masterKey',
  'clock',
  /** What a production deployment must set and a fresh machine has not: admin token rotation, TLS for the API, broker mode. */
  'production',
]);
export type DoctorCheck = z.infer<typeof DoctorCheck>;

/** Stable finding codes: tools match on these, never on the message. */
export const FindingCode = z.enum([
  'CONFIG_OK',
  /** The configuration does not load (a bad value, a retired setting, a missing BC_CONFIG file). */
  'CONFIG_INVALID',
  'NATS_OK',
  /** No BC_NATS_URL and no running stack of this data dir recorded its server. */
  'NATS_URL_UNKNOWN',
  'NATS_UNREACHABLE',
  /** Broker auth is on, but there are neither BC_NATS_CREDS nor the trust chain to issue control-plane credentials. */
  'NATS_CREDENTIALS_MISSING',
  /** The server refused the control plane's credentials: it does not trust this trust chain. */
  'NATS_CREDENTIALS_REFUSED',
  'BROKER_AUTH_OK',
  /** The server lets a connection without credentials in, or the stack runs with BC_NATS_AUTH=none. */
  'BROKER_AUTH_OFF',
  'JETSTREAM_OK',
  'JETSTREAM_UNAVAILABLE',
  'STREAMS_OK',
  'STREAM_MISSING',
  'STREAM_SUBJECTS_MISMATCH',
  'STREAM_RETENTION_MISMATCH',
  'STREAM_STORAGE_MISMATCH',
  'STREAM_REPLICAS_MISMATCH',
  /** A mutable setting differs from the declaration (duplicate window, max age, …): the next start restores it. */
  'STREAM_SETTINGS_DRIFT',
  'API_OK',
  'API_UNREACHABLE',
  'API_NOT_READY',
  /** The API runs with BC_API_AUTH=off: every caller is an anonymous admin. */
  'API_AUTH_OFF',
  /** The API refused the doctor's token: the checks that read the fleet were skipped. */
  'API_TOKEN_REFUSED',
  'READ_MODELS_OK',
  /** A read model has not been built (no checkpoint). */
  'READ_MODEL_MISSING',
  'READ_MODEL_LAGGING',
  /** Messages were moved to the dead-letter stream. */
  'DEAD_LETTERS',
  'SITE_AGENT_CONNECTED',
  /** No site agent pulls the site's commands. */
  'SITE_AGENT_DISCONNECTED',
  'BMC_OK',
  /** Nodes of the site are in maintenance because their BMC stopped answering (source `bmc`). */
  'BMC_UNREACHABLE',
  'HARDWARE_PROFILES_OK',
  /** A pool (error) or node (warning) names a hardware profile nobody declares. */
  'HARDWARE_PROFILE_UNKNOWN',
  'MASTER_KEY_OK',
  'MASTER_KEY_MISSING',
  'MASTER_KEY_INVALID',
  /** The key file is readable or writable by group or others (it must be 0600). */
  'MASTER_KEY_PERMISSIONS',
  /** Stored secrets are sealed under another master key: this one opens none of them. */
  'MASTER_KEY_MISMATCH',
  'CLOCK_OK',
  'CLOCK_SKEW',
  /** Admin token rotated, API behind TLS (or on loopback only), broker permissions on. */
  'PRODUCTION_CONFIGURED',
  /** The bootstrap admin token (`<dataDir>/admin.token`, written in clear at first start) is still accepted. */
  'ADMIN_TOKEN_NOT_ROTATED',
  /** The API listens beyond loopback, or is reached through a public URL, without https. */
  'API_TLS_NOT_CONFIGURED',
  /** The stack runs with BC_NATS_AUTH=none (reported as an error by the broker check as well). */
  'BROKER_MODE_NOT_CONFIGURED',
  /** A check did not run because one it depends on failed. */
  'CHECK_SKIPPED',
]);
export type FindingCode = z.infer<typeof FindingCode>;

export const Finding = z.object({
  check: DoctorCheck,
  code: FindingCode,
  severity: FindingSeverity,
  message: z.string(),
  /** Facts behind the finding (names, numbers); never a secret. */
  detail: z.record(z.string(), z.unknown()).optional(),
});
export type Finding = z.infer<typeof Finding>;

/** What `better-compute doctor --json` prints. */
export const DoctorReport = z.object({
  ok: z.boolean(),
  counts: z.object({ error: z.number().int(), warning: z.number().int(), info: z.number().int() }),
  findings: z.array(Finding),
});
export type DoctorReport = z.infer<typeof DoctorReport>;
