import { parseArgs } from 'node:util';

export interface PeerBenchOptions {
  quick: boolean;
  out: string;
  /** Also run emmett with `synchronous_commit=off` (durability like nats-server 2.9's), as a contender of its own. */
  asyncCommit: boolean;
  /** Also run ours without carried states (appends without one, loads by the events alone): the read before them. */
  withoutState: boolean;
  /** Rounds per workload; in each, both contenders run one block, the first of the pair alternating. */
  rounds: number;
  appendOps: number;
  /** Appends in flight for the throughput workload (the latency one runs one at a time). */
  inFlight: number;
  loads4: number;
  loads100: number;
}

/** `npm run bench:peer -- [--quick] [--async-commit] [--without-state] [--rounds N] [--appends N] [--in-flight N] [--loads N] [--out FILE]` */
export function parsePeerOptions(argv: string[]): PeerBenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      'async-commit': { type: 'boolean', default: false },
      'without-state': { type: 'boolean', default: false },
      rounds: { type: 'string' },
      appends: { type: 'string' },
      'in-flight': { type: 'string' },
      loads: { type: 'string' },
      out: { type: 'string', default: 'bench/results/peer.json' },
    },
  });
  const quick = values.quick === true;
  const positive = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${value}"`);
    return n;
  };
  const loads = positive('loads', values.loads, quick ? 120 : 600);
  return {
    quick,
    out: values.out,
    asyncCommit: values['async-commit'] === true,
    withoutState: values['without-state'] === true,
    rounds: positive('rounds', values.rounds, quick ? 3 : 5),
    appendOps: positive('appends', values.appends, quick ? 300 : 3_000),
    // emmett's pool holds 10 connections by default: more in flight would queue in its client, not in PostgreSQL.
    inFlight: positive('in-flight', values['in-flight'], 8),
    loads4: loads,
    // A 100-event load costs about 25× a 4-event one on a direct get per event: fewer keep a round's time in step.
    loads100: Math.max(10, Math.round(loads / 4)),
  };
}
