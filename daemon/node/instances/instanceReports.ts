import type { HostInstanceReport } from '../../../schemas/agent/hostInstances.ts';
import type { InstanceRecord } from './instanceJournal.ts';

/**
 * The JSON the instances may take in a heartbeat. A node agent's message is at most 128 KiB and the modules take up to
 * 80 KiB of it (`MODULES_HEARTBEAT_BUDGET`, base64 107 KiB): the instances get 8 KiB (base64 11 KiB), about 70 of them
 * with their messages. Past it, messages go (states and addresses stay), and past that the list is cut, the instances
 * whose state is not the desired one kept first: they are what the control plane has to act on.
 */
export const INSTANCES_HEARTBEAT_BUDGET = 8 * 1024;

/** A runtime's message is for people; the heartbeat carries its start. */
const MESSAGE_CHARS = 200;

/** What the heartbeat says of a record: `pending` while its apply is unanswered. */
export function reportOf(record: InstanceRecord): HostInstanceReport {
  const status = record.settled ? record.status : null;
  return {
    id: record.spec.id,
    runtime: record.spec.runtime,
    desiredState: record.spec.desiredState,
    state: status?.state ?? 'pending',
    addresses: status?.addresses ?? [],
    ...(status?.message !== undefined ? { message: status.message.slice(0, MESSAGE_CHARS) } : {}),
    ...(record.spec.warm ? { warm: true as const } : {}),
  };
}

export function fitInstanceReports(reports: readonly HostInstanceReport[], budget = INSTANCES_HEARTBEAT_BUDGET): HostInstanceReport[] {
  const size = (r: unknown) => Buffer.byteLength(JSON.stringify(r));
  if (size(reports) <= budget) return [...reports];
  const bare = reports.map(({ message: _message, ...r }) => r);
  if (size(bare) <= budget) return bare;
  const adrift = (r: HostInstanceReport) => (r.state === r.desiredState ? 1 : 0);
  const fitted: HostInstanceReport[] = [];
  let used = 2;
  for (const r of [...bare].sort((a, b) => adrift(a) - adrift(b))) {
    used += size(r) + 1;
    if (used > budget) break;
    fitted.push(r);
  }
  return fitted;
}
