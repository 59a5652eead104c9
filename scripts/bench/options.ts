import { parseArgs } from 'node:util';

export const MEASUREMENTS = ['raw', 'append', 'http', 'projector', 'rebuild', 'coldLoad'] as const;
export type Measurement = (typeof MEASUREMENTS)[number];

export interface BenchOptions {
  quick: boolean;
  /** Also measure bench copies of proposed product fixes (scripts/bench/variants/), each as a row of its own. */
  variants: boolean;
  only: ReadonlySet<Measurement>;
  out: string;
  /** Extra node flags for the API child process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  apiNodeArgs: string[];
  /** Alternating rounds of the raw and append measurements (medians reported). */
  rounds: number;
  raw: { count: number; warmup: number; inFlight: number };
  append: { count: number; warmup: number; inFlight: number; aggregates: number };
  http: { count: number; warmup: number; concurrency: number };
  /** Events in the stream the projector catches up on. */
  projectorEvents: number;
  /** Events in the stream the rebuild replays (the projector's, plus more). */
  rebuildEvents: number;
  /** Cold aggregate loads timed per method and aggregate length. */
  coldLoads: number;
}

/** `npm run bench -- [--quick] [--variants] [--only raw,append,http,projector,rebuild,coldLoad] [--events N] [--projector-events N] [--concurrency N] [--out FILE]` */
export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      variants: { type: 'boolean', default: false },
      only: { type: 'string' },
      events: { type: 'string' },
      'projector-events': { type: 'string' },
      concurrency: { type: 'string' },
      out: { type: 'string', default: 'bench/results/backbone.json' },
      'api-node-args': { type: 'string', default: process.env.BENCH_API_NODE_ARGS ?? '' },
    },
  });
  const quick = values.quick === true;
  const only = new Set<Measurement>();
  for (const name of (values.only ?? MEASUREMENTS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(MEASUREMENTS as readonly string[]).includes(name)) throw new Error(`--only: unknown measurement "${name}" (${MEASUREMENTS.join(', ')})`);
    only.add(name as Measurement);
  }
  const positive = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${value}"`);
    return n;
  };
  return {
    quick,
    variants: values.variants === true,
    only,
    out: values.out,
    apiNodeArgs: values['api-node-args'].split(' ').filter(Boolean),
    rounds: 3,
    raw: { count: quick ? 10_000 : 40_000, warmup: quick ? 2_000 : 5_000, inFlight: 256 },
    append: { count: quick ? 10_000 : 40_000, warmup: quick ? 2_000 : 5_000, inFlight: 256, aggregates: 10_000 },
    http: { count: quick ? 8_000 : 30_000, warmup: quick ? 2_000 : 3_000, concurrency: positive('concurrency', values.concurrency, 64) },
    projectorEvents: positive('projector-events', values['projector-events'], quick ? 100_000 : 250_000),
    rebuildEvents: positive('events', values.events, quick ? 100_000 : 1_000_000),
    coldLoads: quick ? 100 : 1_000,
  };
}
