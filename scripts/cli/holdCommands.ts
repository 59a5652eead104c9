import { InvalidArgumentError, type Command } from 'commander';
import { selectorOfTerms } from '../../schemas/metal/labelSelectorTerms.ts';
import type { ApiClient } from './apiClient.ts';
import { CliError } from './cliError.ts';
import { table } from './format.ts';

type Output = (value: unknown, human: () => string) => void;
type HoldRow = {
  holdId: string;
  siteId: string;
  holder: { tenantId: string } | { poolId: string };
  status: string;
  nodes: Array<{ nodeId: string }>;
  expiresAt: string;
};

const int = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`not a non-negative integer: ${value}`);
  return n;
};
const collect = (term: string, terms: string[]) => [...terms, term];

interface PlaceOptions {
  site: string;
  tenant?: string;
  pool?: string;
  nodes: number;
  duration: number;
  vcpus?: number;
  memoryMib?: number;
  diskGib?: number;
  label: string[];
  id?: string;
}

/** The `POST /v1/holds` body the options describe; capacity needs all three sizes, none of them holds whole nodes. */
export function holdRequestOf(o: PlaceOptions): Record<string, unknown> {
  if (o.tenant && o.pool) throw new CliError('VALIDATION_FAILED', 'a hold is for --tenant or --pool, not both');
  const sizes = [o.vcpus, o.memoryMib, o.diskGib];
  if (sizes.some((s) => s !== undefined) && sizes.some((s) => s === undefined)) {
    throw new CliError('VALIDATION_FAILED', 'capacity is --vcpus, --memory-mib and --disk-gib together (none of them: whole nodes)');
  }
  const selected = selectorOfTerms(o.label);
  if ('problem' in selected) throw new CliError('VALIDATION_FAILED', selected.problem);
  return {
    siteId: o.site,
    nodes: o.nodes,
    durationSeconds: o.duration,
    selector: selected.selector,
    ...(o.id ? { holdId: o.id } : {}),
    ...(o.tenant ? { holder: { tenantId: o.tenant } } : o.pool ? { holder: { poolId: o.pool } } : {}),
    ...(o.vcpus !== undefined ? { resources: { vcpus: o.vcpus, memoryMib: o.memoryMib, diskGib: o.diskGib } } : {}),
  };
}

/** `holds ls|place|release`: hold reservations (a tenant token: its own). */
export function addHoldCommands(holds: Command, api: () => ApiClient, print: Output): void {
  holds
    .command('ls')
    .description('list holds as they stand now: active, expired or released')
    .option('--site <siteId>')
    .option('--tenant <tenantId>')
    .option('--status <status>', 'active, expired or released')
    .action(async (o: { site?: string; tenant?: string; status?: string }) => {
      const q = new URLSearchParams({
        ...(o.site ? { siteId: o.site } : {}),
        ...(o.tenant ? { tenantId: o.tenant } : {}),
        ...(o.status ? { status: o.status } : {}),
      });
      const page = await api().get<{ items: HoldRow[] }>(`/v1/holds?${q.toString()}`);
      const rows = page.items.map((h) => ({
        holdId: h.holdId,
        siteId: h.siteId,
        holder: 'tenantId' in h.holder ? `tenant:${h.holder.tenantId}` : `pool:${h.holder.poolId}`,
        status: h.status,
        nodes: h.nodes.map((n) => n.nodeId).join(','),
        expiresAt: h.expiresAt,
      }));
      print(page, () => table(rows, ['holdId', 'siteId', 'holder', 'status', 'nodes', 'expiresAt']));
    });
  holds
    .command('place')
    .description('hold N nodes of a site (whole, or --vcpus/--memory-mib/--disk-gib on each) for a tenant or pool')
    .requiredOption('--site <siteId>')
    .requiredOption('--duration <seconds>', 'how long the hold keeps its capacity', int)
    .option('--tenant <tenantId>', 'the holder (a tenant token: itself, the default)')
    .option('--pool <poolId>', 'the holder: a metal pool at the site')
    .option('--nodes <n>', 'how many nodes', int, 1)
    .option('--vcpus <n>', 'vCPUs held on each node', int)
    .option('--memory-mib <n>', 'memory held on each node', int)
    .option('--disk-gib <n>', 'disk held on each node', int)
    .option('--label <term>', 'key=value or key the nodes must carry (repeat to AND them)', collect, [] as string[])
    .option('--id <holdId>', 'the hold id (default: one the API picks)')
    .action(async (o: PlaceOptions) => {
      const result = await api().call<{ holdId: string; seq: number; events: Array<{ type: string; data: { nodes?: Array<{ nodeId: string }> } }> }>(
        'POST',
        '/v1/holds',
        holdRequestOf(o),
      );
      const nodes = result.events[0]?.data.nodes?.map((n) => n.nodeId).join(', ');
      print(result, () => (nodes ? `hold ${result.holdId} on ${nodes} (seq ${result.seq})` : `hold ${result.holdId} unchanged`));
    });
  holds
    .command('release <holdId>')
    .description('give a hold back before it expires')
    .action(async (holdId: string) => {
      const result = await api().call<{ seq: number; events: unknown[] }>('DELETE', `/v1/holds/${encodeURIComponent(holdId)}`);
      print(result, () => (result.events.length > 0 ? `hold ${holdId} released (seq ${result.seq})` : `hold ${holdId} holds nothing already`));
    });
}
