import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../services/platform/config.ts';
import { startNatsServer } from '../../services/platform/nats/embeddedServer.ts';
import { connectNats } from '../../services/platform/nats/connect.ts';
import { ensureStreams } from '../../services/platform/nats/streams.ts';
import { buildProduct } from '../build/build.ts';
import { compiledDir, repoRoot } from '../build/compiledEntry.mjs';
import { measureStart, median, type StartSample } from './build/startup.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { machineInfo } from './report.ts';

/**
 * `npm run bench:build -- [--rounds N] [--out FILE]`: builds the product (`npm run build`), then starts each program
 * compiled and through tsx, alternately, N rounds each, and reports the median time until ready, CPU until ready and
 * resident memory per process. Services count as ready at their "services started" line; the CLI (`--help`) and
 * `bcd` (its usage) until they exit (peak memory).
 */
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, out: { type: 'string', default: 'bench/results/build.json' } } });
const rounds = Number(values.rounds);
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
// How fast the machine ran (bench/README.md, "Machine speed"): sampled before and after, never during what is timed.
const reference = new ReferenceSampler();

const build = buildProduct({ quiet: true });
console.log(`npm run build: ${build.files} modules, ${build.assets} assets in ${(build.ms / 1000).toFixed(1)} s`);

const dir = mkdtempSync(join(tmpdir(), 'bc-build-bench-'));
const nats = await startNatsServer({ storeDir: join(dir, 'nats') });
const env: NodeJS.ProcessEnv = {
  ...process.env,
  BC_NATS_URL: nats.url,
  BC_NATS_AUTH: 'none',
  BC_DATA_DIR: join(dir, 'data'),
  BC_LOG_LEVEL: 'info',
  // Any free port for the API; a master key for the reconciler, which opens provider tokens with it.
  BC_HTTP_PORT: '0',
  BC_MASTER_KEY: randomBytes(32).toString('base64'),
};
const nc = await connectNats(nats.url, 'build-bench');
await ensureStreams(nc, loadConfig(env));
await nc.close();

const source = (path: string) => ['--import', 'tsx', join(repoRoot, path)];
const compiled = (path: string) => [join(compiledDir, path.replace(/\.ts$/, '.js'))];
const programs: { name: string; path: string; args: string[]; ready: string | null; exitCode?: number }[] = [
  ...['commands', 'projector:vps', 'workflow-orchestrator', 'vps-reconciler', 'api'].map((service) => ({
    name: `serve ${service}`,
    path: 'services/stack/serve.ts',
    args: [service],
    ready: '"services started"',
  })),
  { name: 'cli --help', path: 'scripts/cli/main.ts', args: ['--help'], ready: null },
  // bcd without a command prints its usage and exits 2.
  { name: 'bcd (usage)', path: 'daemon/bcd.ts', args: [], ready: null, exitCode: 2 },
];

const results: { program: string; compiled: StartSample; tsx: StartSample }[] = [];
try {
  for (const program of programs) {
    const samples = { compiled: [] as StartSample[], tsx: [] as StartSample[] };
    // Alternately, so a change in the machine's load meanwhile weighs on both alike.
    for (let round = 0; round < rounds; round++) {
      samples.compiled.push(await measureStart([...compiled(program.path), ...program.args], env, program.ready, program.exitCode));
      samples.tsx.push(await measureStart([...source(program.path), ...program.args], env, program.ready, program.exitCode));
    }
    const row = { program: program.name, compiled: median(samples.compiled), tsx: median(samples.tsx) };
    results.push(row);
    // A one-shot program has exited (and its /proc entry with it) by the time its CPU could be read.
    const cpu = Number.isNaN(row.compiled.cpuMs) ? 'CPU not measured (exits first)' : `CPU ${row.compiled.cpuMs} vs ${row.tsx.cpuMs} ms`;
    console.log(
      `  ${program.name.padEnd(30)} ready ${row.compiled.readyMs} ms vs ${row.tsx.readyMs} ms through tsx; ${cpu}; RSS ${row.compiled.rssMiB} vs ${row.tsx.rssMiB} MiB`,
    );
  }
} finally {
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
}

const natsVersion = execFileSync('nats-server', ['--version']).toString().trim();
const result = {
  date: new Date().toISOString(),
  machine: machineInfo(natsVersion, loadAtStart, reference.stop()),
  settings: { rounds },
  note: 'medians per program; compiled = node dist/node/<path>.js, tsx = node --import tsx <path>.ts; services ready at "services started", one-shots at exit (RSS: peak)',
  buildSeconds: build.ms / 1000,
  programs: results,
};
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`load average ${loadAtStart} at start, ${result.machine.loadAverage.end} at the end; written to ${values.out}`);
