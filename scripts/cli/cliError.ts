/** A refusal of the CLI itself (bad flag, missing file), with a stable code scripts can match on. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
