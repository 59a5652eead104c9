import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder that lives as long as one `vitest run`, shared by its test files (e.g. one host image build). */
    runDir: string;
  }
}

/** Vitest global setup: the run's shared folder, removed when the run ends. */
export default function setup(project: TestProject): () => void {
  const runDir = mkdtempSync(join(tmpdir(), 'bc-test-run-'));
  project.provide('runDir', runDir);
  return () => rmSync(runDir, { recursive: true, force: true });
}
