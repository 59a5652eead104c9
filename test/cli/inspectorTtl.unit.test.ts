import { describe, expect, test } from 'vitest';
import { CliError } from '../../scripts/cli/cliError.ts';
import { parseTtl } from '../../scripts/cli/inspect/inspectorCredsCommand.ts';

describe('broker creds --inspector --ttl', () => {
  test('reads seconds, minutes and hours up to a day', () => {
    expect(parseTtl('90s')).toBe(90);
    expect(parseTtl('30m')).toBe(1800);
    expect(parseTtl('24h')).toBe(86_400);
  });

  test('refuses zero, more than a day and anything that is not <n>s|m|h, with a stable code', () => {
    for (const bad of ['0s', '25h', '1d', '1h30m', '', '-1h', '1.5h']) {
      expect(() => parseTtl(bad)).toThrow(CliError);
      expect(() => parseTtl(bad)).toThrow(expect.objectContaining({ code: 'INVALID_TTL' }) as Error);
    }
  });
});
