import { useSignedIn } from '../api/apiContext.tsx';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { TableHead } from '../components/TableHead.tsx';

/** Registered plugins with their live replicas, and every profile with what `profiles.validate` says of it. */
export function PluginsPage() {
  const { client } = useSignedIn();
  const plugins = useResource('plugins', (_minSeq, signal) => client.plugins(signal));
  const profiles = useResource('profiles-validated', async (_minSeq, signal) => {
    const { items } = await client.profiles(signal);
    return Promise.all(items.map(async (profile) => ({ profile, validation: await client.validateProfile(profile.id) })));
  });
  useLiveReload(plugins, subjectOf.plugins);
  useLiveReload(profiles, subjectOf.plugins);
  return (
    <section aria-labelledby="plugins-title">
      <h1 id="plugins-title">Plugins and profiles</h1>
      <h2>Plugins</h2>
      <ProblemAlert error={plugins.error} />
      {plugins.data?.items.length === 0 && <p>No plugins registered.</p>}
      {plugins.data && plugins.data.items.length > 0 && (
        <div className="table-scroll">
          <table>
            <TableHead caption="Registered plugins" columns={['Plugin', 'Version', 'Replicas', 'Steps', 'Profiles', 'Providers']} />
            <tbody>
              {plugins.data.items.map((p) => (
                <tr key={p.pluginId}>
                  <td>{p.pluginId}</td>
                  <td>{p.version}</td>
                  <td>{p.alive ? `${p.replicas.length} live` : 'none answering'}</td>
                  <td>{p.steps.map((s) => s.id).join(', ') || '—'}</td>
                  <td>{p.profiles.map((s) => s.id).join(', ') || '—'}</td>
                  <td>{p.providers.map((s) => s.id).join(', ') || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Profiles</h2>
      <ProblemAlert error={profiles.error} />
      {profiles.data && (
        <div className="table-scroll">
          <table>
            <TableHead caption="Profiles and their validation" columns={['Profile', 'Operation', 'From', 'Steps', 'Validation']} />
            <tbody>
              {profiles.data.map(({ profile, validation }) => (
                <tr key={profile.id} data-profile={profile.id}>
                  <td>
                    {profile.id} v{profile.version}
                  </td>
                  <td>{profile.role}</td>
                  <td>{profile.pluginId ?? 'built in'}</td>
                  <td>{profile.steps.map((s) => s.id).join(' → ')}</td>
                  <td>
                    {validation.ok ? (
                      <span className="badge state-succeeded">valid</span>
                    ) : (
                      <ul>
                        {validation.issues.map((i) => (
                          <li key={`${i.code}:${i.stepIndex}:${i.message}`}>
                            <strong>{i.code}</strong> {i.stepId ? `${i.stepId}: ` : ''}
                            {i.message}
                          </li>
                        ))}
                      </ul>
                    )}
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
