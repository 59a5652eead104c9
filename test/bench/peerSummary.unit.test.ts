import { describe, expect, it } from 'vitest';
import { medianRound, ratios, type PeerFigure } from '../../scripts/bench/peer/report.ts';
import type { RoundResult } from '../../scripts/bench/peer/workload.ts';

const round = (over: Partial<RoundResult> = {}): RoundResult => ({
  ops: 100,
  seconds: 1,
  opsPerSecond: 100,
  p50Ms: 1,
  p99Ms: 5,
  clientCpuUs: 100,
  serverCpuUs: 100,
  otherCores: 0.1,
  ...over,
});

const figure = (contender: string, median: RoundResult): PeerFigure => ({
  workload: 'coldLoad4',
  label: 'cold load, 4 events',
  contender,
  server: contender === 'ours' ? 'nats-server' : 'postgres',
  median,
  rounds: [median],
});

describe('bench:peer summary', () => {
  it('takes the median of each timing and the CPU per operation over all rounds together', () => {
    // A server's CPU comes in 10 ms ticks: 0, 1 and 2 ticks over 100 operations are 0, 100 and 200 µs per operation.
    const summary = medianRound([
      round({ p50Ms: 3, opsPerSecond: 90, serverCpuUs: 0 }),
      round({ p50Ms: 1, opsPerSecond: 300, serverCpuUs: 200, ops: 300 }),
      round({ p50Ms: 2, opsPerSecond: 100, serverCpuUs: 100 }),
    ]);
    expect(summary).toMatchObject({ p50Ms: 2, opsPerSecond: 100, clientCpuUs: 100, serverCpuUs: 140 });
  });

  it('leaves the server CPU out when a round could not read it', () => {
    expect(medianRound([round(), round({ serverCpuUs: null })]).serverCpuUs).toBeNull();
  });

  it('gives ours against each peer, above 1 where ours is slower or costs more', () => {
    const r = ratios([figure('ours', round({ p50Ms: 3, clientCpuUs: 300, serverCpuUs: 300 })), figure('emmett', round())]);
    expect(r).toEqual({ emmett: { coldLoad4: { p50: 3, p99: 1, opsPerSecond: 1, cpuPerOp: 3 } } });
  });
});
