/**
 * Probe: CPU per provider answer read through `pooledFetch`'s Response (`bufferedResponse`) against Node's own
 * `Response` over the same bytes: built, then read with `json()`, as a provider plugin reads an answer.
 * `npx tsx scripts/bench/probe/responseCost.ts [calls]`
 */
import { bufferedResponse } from '../../../services/platform/http/bufferedResponse.ts';

const calls = Number(process.argv[2] ?? 50_000);
const bytes = Buffer.from(JSON.stringify({ server: { id: 'srv-000001', name: 'web-1', status: 'running', power: 'on', ipv4: ['203.0.113.1'] } }));
const headers: [string, string][] = [
  ['content-type', 'application/json'],
  ['date', new Date().toUTCString()],
  ['connection', 'keep-alive'],
];
const variants: [string, () => Response][] = [
  ['Node Response', () => new Response(bytes, { status: 200, headers })],
  ['bufferedResponse', () => bufferedResponse(bytes, { status: 200, headers })],
];

// Alternating rounds, so a machine that speeds up or slows down does not favour one.
const rounds = 5;
const cpuMicros = new Map<string, number[]>();
for (let round = 0; round < rounds; round++) {
  for (const [name, make] of variants) {
    const start = process.cpuUsage();
    for (let i = 0; i < calls; i++) await make().json();
    const used = process.cpuUsage(start);
    cpuMicros.set(name, [...(cpuMicros.get(name) ?? []), (used.user + used.system) / calls]);
  }
}
for (const [name, samples] of cpuMicros) {
  const sorted = [...samples].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(20)} median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} µs CPU per answer (rounds: ${samples.map((s) => s.toFixed(1)).join(', ')})`,
  );
}
