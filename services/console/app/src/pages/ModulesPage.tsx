import { useState } from 'react';
import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import { RolloutStatus } from '../../../../../schemas/fleet/rolloutViews.ts';
import { useResource } from '../api/useResource.ts';
import { ChoiceFilter } from '../components/ChoiceFilter.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { TableHead } from '../components/TableHead.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { AssignmentList } from '../modules/AssignmentList.tsx';
import { PublisherTable, TemplateTable } from '../modules/CatalogueTables.tsx';
import { RolloutTable } from '../modules/RolloutTable.tsx';

const statuses: readonly (RolloutStatus | '')[] = ['', ...RolloutStatus.options];

/**
 * Day-2 software on the hosts: the modules and their versions, the rollouts moving hosts from one version to another,
 * the templates hosts are assigned, the publishers whose keys sign the versions, and each host's plan. Live.
 */
export function ModulesPage() {
  const { client } = useSignedIn();
  const [status, setStatus] = useState<RolloutStatus | ''>('');
  const modules = useResource('modules', (minSeq, signal) => client.modules(minSeq, signal));
  const rollouts = useResource(`rollouts:${status}`, (minSeq, signal) => client.rollouts({ status }, minSeq, signal));
  const templates = useResource('templates', (minSeq, signal) => client.templates(minSeq, signal));
  const publishers = useResource('publishers', (minSeq, signal) => client.publishers(minSeq, signal));
  useLiveReload(modules, subjectOf.fleetOf('module'));
  useLiveReload(rollouts, subjectOf.fleetOf('rollout'));
  useLiveReload(templates, subjectOf.fleetOf('template'));
  useLiveReload(publishers, subjectOf.fleetOf('publishers'));

  return (
    <section aria-labelledby="modules-title">
      <h1 id="modules-title">Modules</h1>
      <ProblemAlert error={modules.error} />
      {modules.data?.items.length === 0 && <p>No module is published yet.</p>}
      {modules.data && modules.data.items.length > 0 && (
        <div className="table-scroll">
          <table>
            <TableHead caption="Modules" columns={['Module', 'Versions', 'Published last', 'When']} />
            <tbody>
              {modules.data.items.map((m) => (
                <tr key={m.name} data-module={m.name}>
                  <td>
                    <Link href={`/modules/${encodeURIComponent(m.name)}`}>{m.name}</Link>
                  </td>
                  <td>{m.versionCount}</td>
                  <td>{m.lastVersion}</td>
                  <td>
                    <time dateTime={m.lastPublishedAt}>{new Date(m.lastPublishedAt).toLocaleString()}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>Rollouts</h2>
      <ChoiceFilter<RolloutStatus> formLabel="Filter rollouts" id="rollout-status" label="Status" value={status} choices={statuses} onChange={setStatus} />
      <ProblemAlert error={rollouts.error} />
      {rollouts.data?.items.length === 0 && <p>No {status} rollouts.</p>}
      {rollouts.data && rollouts.data.items.length > 0 && <RolloutTable rollouts={rollouts.data.items} caption="Rollouts, newest first" />}

      <h2>Templates</h2>
      <ProblemAlert error={templates.error} />
      {templates.data?.items.length === 0 && <p>No template is defined.</p>}
      {templates.data && templates.data.items.length > 0 && <TemplateTable templates={templates.data.items} />}

      <h2>Publishers</h2>
      <ProblemAlert error={publishers.error} />
      {publishers.data?.items.length === 0 && <p>No publisher is registered.</p>}
      {publishers.data && publishers.data.items.length > 0 && <PublisherTable publishers={publishers.data.items} />}

      <h2>Assignments</h2>
      <AssignmentList />
    </section>
  );
}
