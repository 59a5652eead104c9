import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { AssignmentList } from '../modules/AssignmentList.tsx';
import { RolloutTable } from '../modules/RolloutTable.tsx';
import { VersionTable } from '../modules/VersionTable.tsx';

/** One module: its published versions (who signed each, with which key), the hosts whose plan has it, its rollouts. */
export function ModulePage({ name }: { name: string }) {
  const { client } = useSignedIn();
  const module = useResource(`module:${name}`, (minSeq, signal) => client.module(name, minSeq, signal));
  const publishers = useResource('publishers', (minSeq, signal) => client.publishers(minSeq, signal));
  const rollouts = useResource(`rollouts-of:${name}`, (minSeq, signal) => client.rollouts({ module: name }, minSeq, signal));
  useLiveReload(module, subjectOf.fleetOf('module'));
  useLiveReload(publishers, subjectOf.fleetOf('publishers'));
  useLiveReload(rollouts, subjectOf.rolloutsOf(name));

  return (
    <section aria-labelledby="module-title">
      <h1 id="module-title">Module {name}</h1>
      <p>
        <Link href="/modules">All modules</Link>
      </p>
      <ProblemAlert error={module.error ?? publishers.error} />
      {module.data && <VersionTable versions={module.data.versions} publishers={publishers.data?.items ?? []} />}

      <h2>Hosts</h2>
      <AssignmentList module={name} />

      <h2>Rollouts</h2>
      <ProblemAlert error={rollouts.error} />
      {rollouts.data?.items.length === 0 && <p>No rollout of {name} yet.</p>}
      {rollouts.data && rollouts.data.items.length > 0 && <RolloutTable rollouts={rollouts.data.items} caption={`Rollouts of ${name}, newest first`} />}
    </section>
  );
}
