import type { ErrorCode } from '../../schemas/errorCodes.ts';
import { PlatformError } from '../../schemas/platformError.ts';

/** Why configuration could not be loaded or used; stable, for matching (the platform code says how it crosses boundaries). */
export const ConfigReason = {
  /** A setting that no longer exists was given (its replacement is in the message). */
  RETIRED_SETTING: 'VALIDATION_FAILED',
  /** A setting has a value it cannot take (the message names each one and what it must be). */
  INVALID_SETTING: 'VALIDATION_FAILED',
  /** `BC_CONFIG` names a file that does not exist. */
  CONFIG_FILE_MISSING: 'VALIDATION_FAILED',
  /** The config file does not parse, throws when loaded, or its default export is not an object of settings. */
  CONFIG_FILE_UNREADABLE: 'VALIDATION_FAILED',
  /** No NATS server is configured and no running stack of this data dir recorded one. */
  NATS_URL_UNKNOWN: 'PRECONDITION_FAILED',
} as const satisfies Record<string, ErrorCode>;

export type ConfigReason = keyof typeof ConfigReason;

/** One bad setting: its path in the configuration, the environment variable it came from if any, what is wrong. */
export interface ConfigProblem {
  path: string;
  env?: string;
  message: string;
}

export class ConfigError extends PlatformError {
  override name = 'ConfigError';
  /** For INVALID_SETTING: every problem, with the setting's path (`httpPort`, `plugins.1`) and where it came from. */
  readonly problems: readonly ConfigProblem[];
  constructor(
    readonly reason: ConfigReason,
    message: string,
    options: { cause?: unknown; problems?: readonly ConfigProblem[] } = {},
  ) {
    super(ConfigReason[reason], message, options.cause === undefined ? {} : { cause: options.cause });
    this.problems = options.problems ?? [];
  }
}
