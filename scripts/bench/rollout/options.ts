import { parseArgs } from 'node:util';

export interface RolloutBenchOptions {
  quick: boolean;
  hosts: number;
  heartbeatMs: number;
  /** Hosts sharing one NATS connection in the hosts process. */
  perConnection: number;
  wavePercent: number;
  out: string;
}

/** `npm run bench:rollout -- [--quick] [--hosts N] [--heartbeat-ms N] [--out FILE]` */
export function parseRolloutOptions(argv: string[]): RolloutBenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      hosts: { type: 'string' },
      'heartbeat-ms': { type: 'string' },
      out: { type: 'string', default: 'bench/results/rollout.json' },
    },
  });
  const quick = values.quick === true;
  const positive = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${value}"`);
    return n;
  };
  return {
    quick,
    hosts: positive('hosts', values.hosts, quick ? 20 : 1_000),
    heartbeatMs: positive('heartbeat-ms', values['heartbeat-ms'], quick ? 500 : 2_000),
    perConnection: 25,
    wavePercent: 10,
    out: values.out,
  };
}
