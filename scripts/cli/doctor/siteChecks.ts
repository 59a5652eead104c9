import type { JetStreamManager } from '@nats-io/jetstream';
import type { Finding } from '../../../schemas/doctor.ts';
import type { NodeView } from '../../../schemas/metal/views.ts';
import { AgentDurables, Streams } from '../../../schemas/subjects.ts';
import { finding } from './finding.ts';

/**
 * A site agent is connected when it pulls from its durable (`site_<siteId>` on BC_AGENT_COMMANDS): the server counts
 * its outstanding pull requests, and drops them the moment the agent's connection goes. Sites with enrolled nodes and
 * no agent are errors (nothing there can be inspected, deployed or released); empty sites are warnings.
 */
export async function checkSiteAgents(jsm: JetStreamManager, sites: ReadonlyArray<{ siteId: string; nodeCount: number }>): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const site of sites) {
    const durable = AgentDurables.site(site.siteId);
    const info = await jsm.consumers.info(Streams.agentCommands.name, durable).catch(() => undefined);
    const detail = { siteId: site.siteId, durable, nodeCount: site.nodeCount };
    if (info && info.num_waiting > 0) {
      findings.push(finding('siteAgents', 'SITE_AGENT_CONNECTED', 'info', `site ${site.siteId}: its agent is connected`, detail));
      continue;
    }
    const why = info ? 'nothing pulls its commands' : 'no agent has joined (no durable)';
    findings.push(finding('siteAgents', 'SITE_AGENT_DISCONNECTED', site.nodeCount > 0 ? 'error' : 'warning', `site ${site.siteId}: ${why}`, detail));
  }
  return findings;
}

/** Per site, the nodes the bmc-monitor put into maintenance because their BMC stopped answering. */
export function checkBmcs(sites: ReadonlyArray<{ siteId: string }>, nodes: readonly NodeView[]): Finding[] {
  return sites.map(({ siteId }) => {
    const atSite = nodes.filter((n) => n.siteId === siteId);
    const unreachable = atSite.filter((n) => n.maintenance && n.maintenanceSource === 'bmc').map((n) => n.nodeId);
    if (unreachable.length > 0) {
      return finding(
        'bmc',
        'BMC_UNREACHABLE',
        'warning',
        `site ${siteId}: ${unreachable.length} of ${atSite.length} BMCs do not answer (${unreachable.join(', ')})`,
        { siteId, nodes: unreachable },
      );
    }
    return finding('bmc', 'BMC_OK', 'info', `site ${siteId}: ${atSite.length} BMCs answer`, { siteId, nodeCount: atSite.length });
  });
}

/** Sites known to the API, plus any with an agent durable the API does not list (or all of them when the API could not be read). */
export async function sitesOf(
  jsm: JetStreamManager,
  fromApi: ReadonlyArray<{ siteId: string; nodeCount: number }> | undefined,
): Promise<Array<{ siteId: string; nodeCount: number }>> {
  const sites = new Map((fromApi ?? []).map((s) => [s.siteId, { siteId: s.siteId, nodeCount: s.nodeCount }]));
  const prefix = AgentDurables.site('');
  try {
    for await (const consumer of jsm.consumers.list(Streams.agentCommands.name)) {
      const name = consumer.config.durable_name ?? consumer.name;
      const siteId = name.slice(prefix.length);
      if (name.startsWith(prefix) && !sites.has(siteId)) sites.set(siteId, { siteId, nodeCount: 0 });
    }
  } catch {
    // No BC_AGENT_COMMANDS stream (reported by the stream check): no agent could have joined anyway.
  }
  return [...sites.values()];
}
