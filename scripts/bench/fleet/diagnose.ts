import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { MachineTimes } from './driver.ts';

/** When the fleet stalls: where the work sits (consumer states) and the last events of a few unfinished machines. */
export async function diagnoseStall(nc: NatsConnection, machines: Map<string, MachineTimes>, siteIds: readonly string[]): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const lines: string[] = [];
  const consumers: [string, string][] = [
    ['BC_EVENTS', 'workflow_orchestrator'],
    ['BC_EVENTS', 'projectors'],
    ['BC_WORK', 'workflow_executor'],
    ...siteIds.map((siteId): [string, string] => ['BC_AGENT_COMMANDS', `site_${siteId}`]),
  ];
  for (const [stream, name] of consumers) {
    const c = await jsm.consumers.info(stream, name).catch(() => undefined);
    if (!c) lines.push(`${stream}/${name}: missing`);
    else
      lines.push(
        `${stream}/${name}: pending ${c.num_pending} ack_pending ${c.num_ack_pending} redelivered ${c.num_redelivered} waiting ${c.num_waiting} delivered ${c.delivered.stream_seq} ack_floor ${c.ack_floor.stream_seq}`,
      );
  }
  const stuck = [...machines.entries()].filter(([, t]) => t.released === undefined && t.failed === undefined).slice(0, 4);
  for (const [nodeId] of stuck) {
    const m = await jsm.direct.getMessage('BC_EVENTS', { last_by_subj: `bc.evt.metal.node.${nodeId}` }).catch(() => null);
    const batch = m?.json<{ events: { type: string; data: { workflowId?: string } }[] }>();
    const last = batch?.events.at(-1);
    lines.push(`${nodeId}: last node event ${last?.type} ${(JSON.stringify(last?.data) ?? '').slice(0, 200)}`);
    const wf = batch?.events.find((e) => e.data.workflowId)?.data.workflowId ?? undefined;
    if (wf) {
      const w = await jsm.direct.getMessage('BC_EVENTS', { last_by_subj: `bc.evt.metal.workflow.${wf}` }).catch(() => null);
      lines.push(
        `  workflow ${wf}: last ${JSON.stringify(w?.json<{ events: unknown[] }>().events.map((e) => e as { type: string; data: unknown })).slice(0, 400)}`,
      );
    }
  }
  return lines;
}

/** One line of where work waits now: the orchestrator's unread events and the step work not yet taken or not yet done. */
export async function backlogLine(nc: NatsConnection): Promise<string> {
  const jsm = await jetstreamManager(nc);
  const parts: string[] = [];
  for (const [stream, name, label] of [
    ['BC_EVENTS', 'workflow_orchestrator', 'orchestrator'],
    ['BC_WORK', 'workflow_executor', 'work'],
  ] as const) {
    const c = await jsm.consumers.info(stream, name).catch(() => undefined);
    parts.push(c ? `${label} unread ${c.num_pending} unacked ${c.num_ack_pending}` : `${label} -`);
  }
  return parts.join('  ');
}
