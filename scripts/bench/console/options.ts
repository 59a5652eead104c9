import { parseArgs } from 'node:util';

export interface ConsoleBenchOptions {
  quick: boolean;
  /** Nodes in the read model the console lists (half at each of two sites). */
  nodes: number;
  /** Cold loads of the node list measured; the report gives each figure's median. */
  rounds: number;
  out: string;
}

/** `npm run bench:console -- [--quick] [--nodes N] [--rounds N] [--out FILE]` */
export function parseConsoleOptions(argv: string[]): ConsoleBenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      nodes: { type: 'string' },
      rounds: { type: 'string' },
      out: { type: 'string', default: 'bench/results/console.json' },
    },
  });
  const quick = values.quick === true;
  const positive = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${value}"`);
    return n;
  };
  const nodes = positive('nodes', values.nodes, quick ? 300 : 10_000);
  if (nodes % 2 !== 0) throw new Error(`--nodes must be even (half at each site), got ${nodes}`);
  return { quick, nodes, rounds: positive('rounds', values.rounds, quick ? 1 : 3), out: values.out };
}
