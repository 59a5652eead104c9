import { parseArgs } from 'node:util';

export interface VpsBenchOptions {
  quick: boolean;
  commands: number;
  tenants: number;
  /** Commands in flight at once from the bench's clients. */
  concurrency: number;
  /** `commands` service processes: with more than one, tenants' reservations race across processes (OCC conflicts). */
  commandProcesses: number;
  /** Share of each tenant's requests its instance quota admits (the rest is refused QUOTA_EXCEEDED). */
  quotaShare: number;
  resyncMs: number;
  /** Emulated boot time of a server at Acme. */
  bootMs: number;
  /** Give up on instances still not running after this long without progress. */
  stallSeconds: number;
  /** Node flags for the control-plane processes (e.g. `--cpu-prof --cpu-prof-dir=DIR`), as `bench:fleet` takes them. */
  cpNodeArgs: string[];
  /** Metal-pool rounds: each creates one instance in a warm pool and one in a cold pool (0: no metal-pool phase). */
  metalRounds: number;
  /** Metal-pool creates sent at once into the cold pool after the rounds (two 64-core hosts hold 128 in all). */
  metalBurst: number;
  /** What preparing a new metal instance costs on the runtime (its disk, its bundle): a warm slot paid it ahead. */
  prepareMs: number;
  /** A result file of an earlier run (another commit, same machine) whose figures are written beside this run's. */
  baseline: string | undefined;
  out: string;
}

const positive = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${value}"`);
  return n;
};

/** `npm run bench:vps -- [--quick] [--commands N] [--tenants N] [--concurrency N] [--command-processes N] [--cp-node-args ARGS] [--metal-rounds N] [--metal-burst N] [--prepare-ms MS] [--baseline FILE] [--out FILE]` */
export function parseVpsBenchOptions(argv: string[]): VpsBenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      commands: { type: 'string' },
      tenants: { type: 'string' },
      concurrency: { type: 'string' },
      'command-processes': { type: 'string' },
      'resync-ms': { type: 'string' },
      'boot-ms': { type: 'string' },
      stall: { type: 'string' },
      'cp-node-args': { type: 'string', default: process.env.BENCH_CP_NODE_ARGS ?? '' },
      baseline: { type: 'string' },
      'metal-rounds': { type: 'string' },
      'metal-burst': { type: 'string' },
      'prepare-ms': { type: 'string' },
      out: { type: 'string', default: 'bench/results/vps.json' },
    },
  });
  const quick = values.quick ?? false;
  const commands = positive('commands', values.commands, quick ? 1_000 : 10_000);
  const tenants = positive('tenants', values.tenants, quick ? 20 : 100);
  if (commands % tenants !== 0) throw new Error(`--commands (${commands}) must be a multiple of --tenants (${tenants})`);
  return {
    quick,
    commands,
    tenants,
    concurrency: positive('concurrency', values.concurrency, 64),
    commandProcesses: positive('command-processes', values['command-processes'], 2),
    quotaShare: 0.8,
    resyncMs: positive('resync-ms', values['resync-ms'], 500),
    bootMs: positive('boot-ms', values['boot-ms'], 200),
    stallSeconds: positive('stall', values.stall, 60),
    cpNodeArgs: values['cp-node-args'].split(' ').filter(Boolean),
    metalRounds: values['metal-rounds'] === '0' ? 0 : positive('metal-rounds', values['metal-rounds'], quick ? 4 : 30),
    metalBurst: positive('metal-burst', values['metal-burst'], quick ? 16 : 48),
    prepareMs: positive('prepare-ms', values['prepare-ms'], 300),
    baseline: values.baseline,
    out: values.out ?? 'bench/results/vps.json',
  };
}
