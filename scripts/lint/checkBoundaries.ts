/**
 * `npm run lint:boundaries`: the one-way layer check (.dependency-cruiser.cjs) over the whole product, failing on any
 * violation that is not in the known-violations baseline. `--update-baseline` rewrites the baseline from today's tree;
 * do that only when a change removes violations, never to let a new one in.
 *
 * dependency-cruiser's own `--ignore-known` softens file-level violations only (folder-scoped ones are a TODO in its
 * source), so this wrapper matches the folder-cycle violations against the same baseline file by rule, from and to.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const folders = ['services', 'schemas', 'projections', 'plugins', 'daemon', 'scripts', 'test'];
const config = '.dependency-cruiser.cjs';
const baselineFile = '.dependency-cruiser-known-violations.json';
// The package's exports do not include its bin; npm scripts run from the repo root.
const depcruise = join(process.cwd(), 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  type: string;
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: { name: string }[];
}

function run(args: string[]): string {
  try {
    return execFileSync(process.execPath, [depcruise, ...folders, '--config', config, ...args], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch (error) {
    // depcruise exits non-zero when it finds errors; its report is still on stdout.
    const stdout = (error as { stdout?: string }).stdout;
    if (typeof stdout === 'string' && stdout.length > 0) return stdout;
    throw error;
  }
}

if (process.argv.includes('--update-baseline')) {
  run(['--output-type', 'baseline', '--output-to', baselineFile]);
  const count = (JSON.parse(readFileSync(baselineFile, 'utf8')) as Violation[]).length;
  console.log(`wrote ${baselineFile}: ${count} known violations`);
} else {
  const known = JSON.parse(readFileSync(baselineFile, 'utf8')) as Violation[];
  const knownFolderViolations = new Set(known.map((v) => `${v.rule.name}|${v.from}|${v.to}`));
  const report = JSON.parse(run(['--ignore-known', baselineFile, '--output-type', 'json'])) as {
    summary: { violations: Violation[]; totalCruised: number };
  };
  const fresh = report.summary.violations.filter((v) => v.rule.severity === 'error' && !knownFolderViolations.has(`${v.rule.name}|${v.from}|${v.to}`));
  const stillKnown = report.summary.violations.length - fresh.length;
  for (const v of fresh) {
    const path = v.cycle && v.cycle.length > 0 ? `${v.from} → ${v.cycle.map((step) => step.name).join(' → ')}` : `${v.from} → ${v.to}`;
    console.error(`  error ${v.rule.name}: ${path}`);
  }
  console.log(`${report.summary.totalCruised} modules cruised; ${fresh.length} new boundary violations; ${stillKnown} known ones left in ${baselineFile}`);
  if (fresh.length > 0) process.exit(1);
}
