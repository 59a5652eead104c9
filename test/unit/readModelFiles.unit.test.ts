import { describe, expect, it } from 'vitest';
import { ReadModelFiles } from '../../services/projectors/readModelFiles.ts';
import { tempDir } from '../support/natsServer.ts';

describe('ReadModelFiles', () => {
  it('ReadModelFiles names a new file different from the live one, even within one millisecond (regression)', () => {
    using dir = tempDir();
    const files = new ReadModelFiles(dir.path, 'nodes');
    expect(files.newFile()).not.toBe(files.current());
  });

  it('ReadModelFiles swaps the live file and keeps only the current and previous ones', () => {
    using dir = tempDir();
    const files = new ReadModelFiles(dir.path, 'nodes');
    const first = files.current();
    const second = files.newFile();
    files.swapTo(second);
    expect(files.current()).toBe(second);
    const third = files.newFile();
    files.swapTo(third);
    expect(files.current()).toBe(third);
    expect(first).not.toBe(third);
  });
});
