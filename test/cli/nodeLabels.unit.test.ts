import { describe, expect, it } from 'vitest';
import { labelChangesOf } from '../../scripts/cli/nodeLabelCommands.ts';

describe('nodes label', () => {
  it('reads key=value as a label set and key- as a label removed, in one change', () => {
    expect(labelChangesOf(['zone=a', 'rack-', 'gpu=', 'example.com/row=7'])).toEqual({ set: { zone: 'a', gpu: '', 'example.com/row': '7' }, remove: ['rack'] });
  });

  it('refuses a term that is neither with VALIDATION_FAILED', () => {
    for (const term of ['zone', '-', '=a', ''])
      expect(() => labelChangesOf([term]), term).toThrowError(expect.objectContaining({ code: 'VALIDATION_FAILED' }) as never);
  });
});
