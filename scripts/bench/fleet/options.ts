import { parseArgs } from 'node:util';
import type { ProcessLayout } from '../../../services/stack/processLayout.ts';

export interface FleetOptions {
  quick: boolean;
  machines: number;
  /** Simulated sites, one process each, the machines split between them (a site agent and its BMCs run on one core). */
  sites: number;
  /** Per-site caps for deploys and release wipes (BC_MAX_DEPLOYS_PER_SITE / BC_MAX_WIPES_PER_SITE). */
  cap: number;
  executorConcurrency: number;
  /** BC_MAX_WORKFLOWS_IN_FLIGHT: workflows admitted at once across the fleet (unset: the executor concurrency, the default rule). */
  workflowsInFlight: number | undefined;
  resultRecheckMs: number;
  diskBytes: number;
  imageBytes: number;
  /** Give up waiting after this many seconds (the report then says how far the fleet got). */
  timeoutSeconds: number;
  /** Stop early when no node event arrived for this long (a stalled fleet). */
  stallSeconds: number;
  out: string;
  /** How the control-plane services are grouped into processes, as `npm start` does with BC_PROCESS_LAYOUT. */
  layout: ProcessLayout;
  /** Run the same fleet again right after under this layout, as the baseline of the first run. */
  baselineLayout: ProcessLayout | undefined;
  /** Extra node flags for the control-plane children, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  cpNodeArgs: string[];
}

const positive = (name: string, value: string | undefined, fallback: number) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${value}"`);
  return n;
};

function processLayoutOption(name: string, value: string): ProcessLayout {
  if (value !== 'compact' && value !== 'split') throw new Error(`--${name} must be compact or split, got "${value}"`);
  return value;
}

/** `npm run bench:fleet -- [--quick] [--machines N] [--sites N] [--layout compact|split] [--baseline-layout compact|split] [--cap N] [--concurrency N] [--workflows-in-flight N] [--recheck-ms N] [--timeout S] [--out FILE]` */
export function parseFleetOptions(argv: string[]): FleetOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      machines: { type: 'string' },
      sites: { type: 'string' },
      cap: { type: 'string' },
      concurrency: { type: 'string' },
      'workflows-in-flight': { type: 'string' },
      'recheck-ms': { type: 'string' },
      timeout: { type: 'string' },
      stall: { type: 'string' },
      layout: { type: 'string', default: 'compact' },
      'baseline-layout': { type: 'string' },
      out: { type: 'string', default: 'bench/results/fleet.json' },
      'cp-node-args': { type: 'string', default: process.env.BENCH_CP_NODE_ARGS ?? '' },
    },
  });
  const quick = values.quick === true;
  const layout = processLayoutOption('layout', values.layout);
  const baselineLayout = values['baseline-layout'] === undefined ? undefined : processLayoutOption('baseline-layout', values['baseline-layout']);
  return {
    quick,
    machines: positive('machines', values.machines, quick ? 100 : 1_000),
    sites: positive('sites', values.sites, 1),
    cap: positive('cap', values.cap, 100),
    executorConcurrency: positive('concurrency', values.concurrency, 256),
    workflowsInFlight: values['workflows-in-flight'] === undefined ? undefined : positive('workflows-in-flight', values['workflows-in-flight'], 1),
    resultRecheckMs: positive('recheck-ms', values['recheck-ms'], 10_000),
    diskBytes: 4 << 20,
    imageBytes: 256 << 10,
    timeoutSeconds: positive('timeout', values.timeout, quick ? 120 : 900),
    stallSeconds: positive('stall', values.stall, 60),
    layout,
    baselineLayout,
    out: values.out,
    cpNodeArgs: values['cp-node-args'].split(' ').filter(Boolean),
  };
}
