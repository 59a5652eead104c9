import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { repoRoot } from '../../services/platform/repoRoot.ts';
import { tempDir } from '../support/natsServer.ts';

const page = readFileSync(join(repoRoot, 'docs/walkthroughs.md'), 'utf8');
const rows = page
  .split('\n')
  .filter((line) => /^\| \d+\. /.test(line))
  .map((line) => line.split(' | '));
const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('docs/walkthroughs.md', () => {
  it('names tests that exist and run commands that run them', () => {
    expect(rows.length).toBeGreaterThanOrEqual(7);
    for (const [, , tests, run] of rows) {
      const files = codeSpans(tests!);
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect(existsSync(join(repoRoot, file)), file).toBe(true);
      const [command] = codeSpans(run!);
      // The command runs one of the row's tests, the way the helper brief says to run one file.
      expect(command, run).toMatch(/^npx vitest run \S+\.test\.ts$/);
      expect(files).toContain(command!.split(' ').at(-1));
    }
  });

  it('names npm scripts that exist', () => {
    for (const script of [...page.matchAll(/`npm run ([a-z:-]+)/g)].map((m) => m[1]!)) expect(scripts[script], script).toBeDefined();
  });
});

describe('examples', () => {
  it('every example deployment config loads', () => {
    using dir = tempDir();
    const configs = readdirSync(join(repoRoot, 'examples'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.config.ts'));
    expect(configs.length).toBeGreaterThan(0);
    for (const file of configs) expect(() => loadConfig({ BC_DATA_DIR: dir.path, BC_CONFIG: join(repoRoot, 'examples', file) }), file).not.toThrow();
  });
});
