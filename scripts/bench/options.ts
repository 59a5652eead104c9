import { parseArgs } from 'node:util';

export const MEASUREMENTS = ['raw', 'append', 'http', 'projector', 'rebuild'] as const;
export type Measurement = (typeof MEASUREMENTS)[number];

export interface BenchOptions {
  quick: boolean;
  only: ReadonlySet<Measurement>;
  out: string;
  /** Extra node flags for the API child process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  apiNodeArgs: string[];
  raw: { count: number; warmup: number; inFlight: number };
  append: { count: number; warmup: number; inFlight: number; aggregates: number };
  http: { count: number; warmup: number; concurrency: number };
  /** Events in the stream the projector catches up on and the rebuild replays. */
  events: number;
}

/** `npm run bench -- [--quick] [--only raw,append,http,projector,rebuild] [--events N] [--concurrency N] [--out FILE]` */
export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      events: { type: 'string' },
      concurrency: { type: 'string' },
      out: { type: 'string', default: 'bench/results/backbone.json' },
      'api-node-args': { type: 'string', default: process.env.BENCH_API_NODE_ARGS ?? '' },
    },
  });
  const quick = values.quick === true;
  const only = new Set<Measurement>();
  for (const name of (values.only ?? MEASUREMENTS.join(',')).split(',').map((s) => s.trim()).filter(Boolean)) {
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
    only,
    out: values.out!,
    apiNodeArgs: values['api-node-args']!.split(' ').filter(Boolean),
    raw: { count: quick ? 20_000 : 100_000, warmup: quick ? 2_000 : 5_000, inFlight: 256 },
    append: { count: quick ? 20_000 : 100_000, warmup: quick ? 2_000 : 5_000, inFlight: 256, aggregates: 10_000 },
    http: { count: quick ? 6_000 : 30_000, warmup: quick ? 1_000 : 3_000, concurrency: positive('concurrency', values.concurrency, 64) },
    events: positive('events', values.events, quick ? 100_000 : 1_000_000),
  };
}
