import { useSignedIn } from '../api/apiContext.tsx';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { StateBadge } from '../components/StateBadge.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { InstanceActions } from '../vps/InstanceActions.tsx';
import { QuotaBar } from '../vps/QuotaBar.tsx';
import { QuotaLegend } from '../vps/QuotaLegend.tsx';
import { TableHead } from '../components/TableHead.tsx';

/**
 * VPS tenants with their quota (limit, reserved, used; one legend for the bars) and instances with desired and observed
 * state and their verbs: start, stop, delete, remediate (a tenant: its own).
 */
export function VpsPage() {
  const { client } = useSignedIn();
  const tenants = useResource('tenants', (minSeq, signal) => client.tenants(minSeq, signal));
  const instances = useResource('instances', (minSeq, signal) => client.instances(minSeq, signal));
  useLiveReload(tenants, subjectOf.vps);
  useLiveReload(instances, subjectOf.vps);
  return (
    <section aria-labelledby="vps-title">
      <h1 id="vps-title">VPS</h1>
      <h2>Tenants</h2>
      <ProblemAlert error={tenants.error} />
      {tenants.data?.items.length === 0 && <p>No tenants.</p>}
      {tenants.data && tenants.data.items.length > 0 && <QuotaLegend />}
      <div className="tenants">
        {tenants.data?.items.map(({ tenantId, name, quota: { limit, used, reserved } }) => (
          <article key={tenantId} className="tenant" aria-label={`Tenant ${tenantId}`}>
            <h3>
              {name} <span className="muted">({tenantId})</span>
            </h3>
            <QuotaBar label="Instances" used={used.instances} reserved={reserved.instances} limit={limit.instances} />
            <QuotaBar label="vCPUs" used={used.vcpus} reserved={reserved.vcpus} limit={limit.vcpus} />
            <QuotaBar label="Memory" used={used.memoryMib} reserved={reserved.memoryMib} limit={limit.memoryMib} unit=" MiB" />
            <QuotaBar label="Disk" used={used.diskGib} reserved={reserved.diskGib} limit={limit.diskGib} unit=" GiB" />
          </article>
        ))}
      </div>
      <h2>Instances</h2>
      <ProblemAlert error={instances.error} />
      {instances.data?.items.length === 0 && <p>No instances.</p>}
      {instances.data && instances.data.items.length > 0 && (
        <div className="table-scroll">
          <table>
            <TableHead caption="Instances" columns={['Instance', 'Tenant', 'Pool', 'Flavor', 'Desired', 'Observed', 'State', 'Addresses', 'Actions']} />
            <tbody>
              {instances.data.items.map((i) => (
                <tr key={i.instanceId} data-instance={i.instanceId}>
                  <td>{i.instanceId}</td>
                  <td>{i.tenantId}</td>
                  <td>{i.poolId}</td>
                  <td>{i.flavorId}</td>
                  <td>{i.desired}</td>
                  <td>{i.observed ?? '—'}</td>
                  <td>
                    <StateBadge state={i.state} />
                    {i.message && <span className="muted"> {i.message}</span>}
                  </td>
                  <td>{i.addresses.join(', ') || '—'}</td>
                  <td>
                    <InstanceActions instance={i} onDone={(seq) => instances.reload(seq)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
