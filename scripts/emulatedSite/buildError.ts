/** Why an emulated-site build step failed: a host tool or Debian package is missing, or a tool failed. */
export const BuildErrorCodes = {
  TOOL_MISSING: 'A host tool the build runs is not installed (see scripts/emulatedSite/requiredPackages.txt)',
  PACKAGE_UNAVAILABLE: 'A Debian package could not be resolved or downloaded, and no cached copy exists',
  BUILD_FAILED: 'A build step ran and failed',
} as const;
export type BuildErrorCode = keyof typeof BuildErrorCodes;

export class BuildError extends Error {
  override name = 'BuildError';
  constructor(
    readonly code: BuildErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
