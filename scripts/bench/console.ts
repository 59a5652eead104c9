import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { ensureConsoleBuilt } from '../../services/console/consoleBuild.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { startApi } from '../../test/support/apiFixture.ts';
import { launchChromium } from '../../test/support/chromium.ts';
import { measureLoad, type ConsoleLoad } from './console/measure.ts';
import { benchSites, consoleFillMessage } from './console/nodeFill.ts';
import { parseConsoleOptions } from './console/options.ts';
import { fastFillEvents } from './fastFill.ts';
import { ReferenceSampler } from './referenceWork.ts';
import { machineInfo } from './report.ts';

/**
 * `npm run bench:console -- [--quick] [--nodes 10000] [--rounds 3] [--out FILE]`: the web console's budget, measured in
 * headless Chromium against the API serving the built console with N nodes in its read model (half at each of two
 * sites): first contentful paint, the console's bytes as shipped (compressed) and the API's, the node list's first
 * rows and all rows, and a filter change (any site → one site) to its first rows and all rows. Cold loads, no cache;
 * each figure is the median of the rounds. See bench/README.md.
 */
const options = parseConsoleOptions(process.argv.slice(2));
const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
// How fast the machine ran (bench/README.md, "Machine speed"): sampled before and after, never during what is timed.
const reference = new ReferenceSampler();
const build = await ensureConsoleBuilt(createLogger('console-build'), { force: false });
const env = await startApi();
await env.app.listen({ port: 0, host: '127.0.0.1' });
const api = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;

for (const siteId of benchSites) await env.bus.execute({ name: 'site.create', payload: { siteId, name: siteId }, actor: 'bench' });
const fill = await fastFillEvents(env.store, 0, options.nodes, consoleFillMessage);
// The list reads the nodes read model: wait until it holds every node.
const caughtUp = Date.now();
for (;;) {
  const res = await env.app.inject({ method: 'GET', url: `/v1/nodes?siteId=${benchSites[1]}&limit=1&minSeq=${fill.lastSeq}` });
  if (res.statusCode === 200) break;
  if (Date.now() - caughtUp > 600_000) throw new Error(`the nodes read model did not reach ${fill.lastSeq}: ${res.statusCode} ${res.body}`);
  await new Promise((resolve) => setTimeout(resolve, 250));
}
console.log(`${options.nodes} nodes in the read model (${fill.seconds.toFixed(1)} s to append, ${((Date.now() - caughtUp) / 1000).toFixed(1)} s to project)`);

const loads: ConsoleLoad[] = [];
{
  await using browser = await launchChromium();
  for (let round = 0; round < options.rounds; round++) {
    const load = await measureLoad(browser.context, api, env.adminToken, options.nodes, benchSites[1], options.nodes / 2);
    loads.push(load);
    console.log(
      `round ${round + 1}: FCP ${ms(load.firstContentfulPaintMs)}, first rows ${ms(load.firstRowsMs)}, all ${ms(load.allRowsMs)}; filter: first rows ${ms(load.filterFirstRowsMs)}, all ${ms(load.filterAllRowsMs)}`,
    );
  }
}
const natsVersion = (() => {
  try {
    return execFileSync('nats-server', ['--version']).toString().trim();
  } catch {
    return 'unknown';
  }
})();
const machine = machineInfo(natsVersion, loadAtStart, reference.stop());
await env[Symbol.asyncDispose]();

const median = (pick: (l: ConsoleLoad) => number) => {
  const xs = loads.map(pick).sort((a, b) => a - b);
  return Math.round(xs[Math.floor(xs.length / 2)]!);
};
const result = {
  date: new Date().toISOString(),
  quick: options.quick,
  machine,
  nodes: options.nodes,
  rounds: options.rounds,
  consoleBuild: build,
  firstContentfulPaintMs: median((l) => l.firstContentfulPaintMs),
  nodeList: { firstRowsMs: median((l) => l.firstRowsMs), allRowsMs: median((l) => l.allRowsMs) },
  filterChange: {
    from: 'any site',
    to: benchSites[1],
    nodes: options.nodes / 2,
    firstRowsMs: median((l) => l.filterFirstRowsMs),
    allRowsMs: median((l) => l.filterAllRowsMs),
  },
  bytes: {
    appTransferred: median((l) => l.appBytes.transferred),
    appDecoded: median((l) => l.appBytes.decoded),
    appEncodings: loads[0]!.appBytes.encodings,
    apiTransferredToAllRows: median((l) => l.apiBytes),
    apiTransferredForFilterChange: median((l) => l.filterApiBytes),
  },
  rawRounds: loads,
};
console.log(
  [
    `console at ${options.nodes} nodes (median of ${options.rounds}):`,
    `  first contentful paint   ${ms(result.firstContentfulPaintMs)}`,
    `  node list: first rows    ${ms(result.nodeList.firstRowsMs)}   all ${options.nodes} ${ms(result.nodeList.allRowsMs)}`,
    `  filter change:           first rows ${ms(result.filterChange.firstRowsMs)}   all ${options.nodes / 2} ${ms(result.filterChange.allRowsMs)}`,
    `  console bytes shipped    ${kb(result.bytes.appTransferred)} on the wire (${kb(result.bytes.appDecoded)} decoded; ${JSON.stringify(result.bytes.appEncodings)})`,
    `  API bytes                ${kb(result.bytes.apiTransferredToAllRows)} to all rows, ${kb(result.bytes.apiTransferredForFilterChange)} for the filter change`,
  ].join('\n'),
);
mkdirSync(dirname(options.out), { recursive: true });
writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`written to ${options.out}`);
process.exit(0);

function ms(n: number): string {
  return `${Math.round(n)} ms`;
}
function kb(n: number): string {
  return `${(n / 1024).toFixed(1)} KiB`;
}
