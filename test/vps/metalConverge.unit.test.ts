import { describe, expect, it } from 'vitest';
import type { HostInstanceReport } from '../../schemas/agent/hostInstances.ts';
import { HostReports } from '../../services/processes/vpsReconciler/hostReports.ts';
import { planMetalPass } from '../../services/processes/vpsReconciler/metalConverge.ts';
import type { ReconciledInstance } from '../../services/processes/vpsReconciler/model.ts';

const RESEND = 1_000;
const instanceOf = (overrides: Partial<ReconciledInstance> = {}): ReconciledInstance => ({
  key: 'tenant-a/vm-1',
  tenantId: 'tenant-a',
  instanceId: 'vm-1',
  spec: { poolId: 'metal-a', flavorId: 'medium', image: 'img', sshKeys: [], userData: null, resources: { vcpus: 2, memoryMib: 2_048, diskGib: 20 } },
  desired: 'running',
  observed: 'provisioning',
  providerInstanceId: null,
  addresses: [],
  message: null,
  released: false,
  refused: false,
  placement: { siteId: 'dc1', nodeId: 'n1' },
  ...overrides,
});
const report = (over: Partial<HostInstanceReport> = {}): HostInstanceReport => ({
  id: 'vm-1',
  runtime: 'process-runtime',
  desiredState: 'running',
  state: 'running',
  addresses: ['10.0.0.7'],
  ...over,
});
/** What a pass does, as names: commands by name and state, tasks by step. */
const summary = (effects: ReturnType<typeof planMetalPass>) =>
  effects.map((e) =>
    e.kind === 'task' ? `task ${e.task.step}` : e.kind === 'command' ? `${e.name} ${(e.payload as { observed?: string }).observed ?? ''}`.trim() : e.kind,
  );

describe('planMetalPass: a metal instance converged by what its own host reports', () => {
  it('records provisioning and places a new instance; a placed one is applied, once per resend period', () => {
    const hosts = new HostReports();
    expect(summary(planMetalPass(instanceOf({ observed: null, placement: undefined }), hosts, 0, RESEND))).toEqual([
      'vps.recordInstanceObserved provisioning',
      'task place',
    ]);
    expect(summary(planMetalPass(instanceOf({ placement: undefined }), hosts, 0, RESEND))).toEqual(['task place']);
    expect(summary(planMetalPass(instanceOf(), hosts, 0, RESEND))).toEqual(['task apply']);
    const applied = instanceOf({ host: { applied: { desired: 'running', at: 5_000 } } });
    expect(summary(planMetalPass(applied, hosts, 5_500, RESEND))).toEqual([]);
    expect(summary(planMetalPass(applied, hosts, 6_000, RESEND))).toEqual(['task apply']);
  });

  it('hears only the node the instance is placed on: another node listing it running changes nothing', () => {
    const hosts = new HostReports();
    const waiting = instanceOf({ host: { applied: { desired: 'running', at: 0 } } });
    hosts.heard({ nodeId: 'n2', at: 10, instances: [report()] });
    expect(planMetalPass(waiting, hosts, 100, RESEND)).toEqual([]);
    hosts.heard({ nodeId: 'n1', at: 20, instances: [report()] });
    const [recorded] = planMetalPass(waiting, hosts, 100, RESEND);
    expect(recorded).toMatchObject({ name: 'vps.recordInstanceObserved', payload: { observed: 'running', addresses: ['10.0.0.7'] } });
    // An older heartbeat heard late does not take the host's word back.
    hosts.heard({ nodeId: 'n1', at: 15, instances: [] });
    expect(hosts.reportFor('n1', 'vm-1')?.report).toMatchObject({ state: 'running' });
  });

  it("waits for the host to carry out the new desired state, and records the runtime's error", () => {
    const hosts = new HostReports();
    hosts.heard({ nodeId: 'n1', at: 10, instances: [report()] });
    const stopping = instanceOf({ desired: 'stopped', observed: 'running', addresses: ['10.0.0.7'], host: { applied: { desired: 'stopped', at: 5 } } });
    // The heartbeat still shows the old desired state: nothing to record, the apply is not resent before its time.
    expect(planMetalPass(stopping, hosts, 100, RESEND)).toEqual([]);
    hosts.heard({ nodeId: 'n1', at: 20, instances: [report({ desiredState: 'stopped', state: 'stopped', addresses: [] })] });
    expect(summary(planMetalPass(stopping, hosts, 100, RESEND))).toEqual(['vps.recordInstanceObserved stopped']);
    hosts.heard({ nodeId: 'n1', at: 30, instances: [report({ state: 'error', addresses: [], message: 'the image does not boot' })] });
    const [failed] = planMetalPass(instanceOf(), hosts, 100, RESEND);
    expect(failed).toMatchObject({ payload: { observed: 'error', message: 'the image does not boot' } });
  });

  it('deletes once a heartbeat heard after the remove no longer lists it, with no address left, then frees the node and releases the quota', () => {
    const hosts = new HostReports();
    hosts.heard({ nodeId: 'n1', at: 10, instances: [report()] });
    const deleting = instanceOf({ desired: 'deleted', observed: 'running', host: { seen: true } });
    expect(summary(planMetalPass(deleting, hosts, 100, RESEND))).toEqual(['vps.recordInstanceObserved deleting', 'task remove']);
    const sent = instanceOf({ desired: 'deleted', observed: 'deleting', host: { seen: true, removeSentAt: 100 } });
    // Heard before the remove went out, or still listed: not gone yet.
    hosts.heard({ nodeId: 'n1', at: 90, instances: [] });
    expect(planMetalPass(sent, hosts, 150, RESEND)).toEqual([]);
    hosts.heard({ nodeId: 'n1', at: 120, instances: [report()] });
    expect(planMetalPass(sent, hosts, 150, RESEND)).toEqual([]);
    // Another node saying nothing of it proves nothing.
    hosts.heard({ nodeId: 'n2', at: 200, instances: [] });
    expect(planMetalPass(sent, hosts, 250, RESEND)).toEqual([]);
    hosts.heard({ nodeId: 'n1', at: 200, instances: [] });
    const gone = planMetalPass(sent, hosts, 250, RESEND);
    expect(summary(gone)).toEqual(['vps.recordInstanceObserved deleted', 'vps.unplaceInstance', 'vps.releaseQuota']);
    // The addresses it had are no longer its own.
    expect(gone[0]).toMatchObject({ payload: { observed: 'deleted', addresses: [] } });
    // A host that never listed it: gone only once a heartbeat a resend period after the remove still does not.
    const never = instanceOf({ desired: 'deleted', observed: 'deleting', host: { removeSentAt: 100 } });
    expect(planMetalPass(never, hosts, 250, RESEND)).toEqual([]);
    hosts.heard({ nodeId: 'n1', at: 1_200, instances: [] });
    expect(summary(planMetalPass(never, hosts, 1_250, RESEND))).toEqual(['vps.recordInstanceObserved deleted', 'vps.unplaceInstance', 'vps.releaseQuota']);
  });
});
