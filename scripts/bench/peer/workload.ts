import { machineCpuSeconds } from '../cpuMeter.ts';
import type { Contender } from './contenders.ts';

/** What one contender did in one round of one workload. */
export interface RoundResult {
  ops: number;
  seconds: number;
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU µs per operation in the bench process (the store's client: nats.js or node-postgres, and the fold). */
  clientCpuUs: number;
  /** CPU µs per operation of the server (nats-server, or the PostgreSQL cluster), from /proc in 10 ms ticks; null where it cannot be read. */
  serverCpuUs: number | null;
  /** Cores everything else on the machine kept busy meanwhile: the noise on these figures. */
  otherCores: number | null;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * Runs `op(0..ops-1)` on `inFlight` workers, timing each operation, with the client's, the server's and the rest of
 * the machine's CPU over the block. Worker `w` takes operations `w, w + inFlight, ...`, so with aggregates chosen by
 * `i % aggregates` (a multiple of `inFlight`) no two operations on one aggregate are ever in flight together.
 */
export async function timeBlock(contender: Contender, ops: number, inFlight: number, op: (i: number) => Promise<void>): Promise<RoundResult> {
  const latencies: number[] = [];
  const server0 = contender.serverCpuSeconds();
  const machine0 = machineCpuSeconds();
  const client0 = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(inFlight, ops) }, async (_, w) => {
      for (let i = w; i < ops; i += inFlight) {
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(client0);
  const server1 = contender.serverCpuSeconds();
  const machine1 = machineCpuSeconds();
  const clientSeconds = (client.user + client.system) / 1e6;
  const serverSeconds = server0 === undefined || server1 === undefined ? undefined : server1 - server0;
  const other = machine0 === undefined || machine1 === undefined ? undefined : Math.max(0, machine1 - machine0 - clientSeconds - (serverSeconds ?? 0));
  latencies.sort((a, b) => a - b);
  return {
    ops,
    seconds: round3(seconds),
    opsPerSecond: Math.round(ops / seconds),
    p50Ms: round3(percentile(latencies, 50)),
    p99Ms: round3(percentile(latencies, 99)),
    clientCpuUs: Math.round((1e7 * clientSeconds) / ops) / 10,
    serverCpuUs: serverSeconds === undefined ? null : Math.round((1e7 * serverSeconds) / ops) / 10,
    otherCores: other === undefined ? null : Math.round((100 * other) / seconds) / 100,
  };
}

/** A workload as the rounds run it: a block of operations for one contender, given the round it is in. */
export interface Workload {
  readonly key: string;
  readonly label: string;
  /** One block; `ops` overrides the workload's size (a warm-up block). */
  run(contender: Contender, round: number, ops?: number): Promise<RoundResult>;
}

let runs = 0;
/** Aggregate ids unique to this process's run, so a reused database (`BC_PEER_PG_URL`) never holds them already. */
export const runPrefix = () => `p${Date.now().toString(36)}${(++runs).toString(36)}`;

/**
 * Appends to fresh aggregates each round, `inFlight` at once (never two on one aggregate), ten per aggregate: the
 * first append of each creates it (a new subject, a new stream row), the others follow on.
 */
export function appends(ops: number, inFlight: number): Workload {
  const aggregates = Math.max(inFlight, Math.ceil(ops / 10 / inFlight) * inFlight);
  return {
    key: `append${inFlight}`,
    label: `append, ${inFlight} in flight`,
    run: (contender, round, n = ops) => {
      const prefix = `${runPrefix()}-a${inFlight}r${round}`;
      return timeBlock(contender, n, inFlight, (i) => contender.append(`${prefix}-${i % aggregates}`, Math.floor(i / aggregates)));
    },
  };
}

/** Events the seeding writes per stream length: more than the event store's decode memo keeps (2,048), so every load verifies and parses. */
const MESSAGES_PER_LENGTH = 2_400;

/**
 * Cold loads of `length`-event aggregates, one at a time. The aggregates are written once by `seed` (round by round
 * across all of them, so each one's events lie spread over the log as a live system's do); successive loads and
 * rounds take the next aggregate in turn.
 */
export function coldLoads(length: number, loads: number): Workload & { seed(contender: Contender): Promise<void> } {
  const ids = new Map<string, string[]>();
  const next = new Map<string, number>();
  const count = Math.ceil(MESSAGES_PER_LENGTH / length);
  return {
    key: `coldLoad${length}`,
    label: `cold load, ${length} events`,
    async seed(contender) {
      const prefix = `${runPrefix()}-l${length}`;
      const list = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
      for (let n = 0; n < length; n++) await Promise.all(list.map((id) => contender.append(id, n)));
      ids.set(contender.name, list);
    },
    run: (contender, _round, n = loads) => {
      const list = ids.get(contender.name);
      if (!list) throw new Error(`${contender.name}: cold loads of ${length} events before seeding`);
      return timeBlock(contender, n, 1, async () => {
        const at = next.get(contender.name) ?? 0;
        next.set(contender.name, at + 1);
        await contender.coldLoad(list[at % list.length]!);
      });
    },
  };
}
