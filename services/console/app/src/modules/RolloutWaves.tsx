import { Link } from 'wouter';
import type { RolloutDetailView, RolloutHostView } from '../api/shapes.ts';
import { StateBadge } from '../components/StateBadge.tsx';
import { TableHead } from '../components/TableHead.tsx';

/** What a host has said of the new version: its outcome; `pending` in a started wave until it reports, `queued` before. */
const outcomeOf = (host: RolloutHostView, started: boolean): string => host.outcome ?? (started ? 'pending' : 'queued');

const waveName = (wave: number) => (wave === 0 ? 'Wave 0 (canary)' : `Wave ${wave}`);

/** A rollout's waves in order: each one's deadline once started, and each host's outcome (and, in a rollback, restore). */
export function RolloutWaves({ rollout }: { rollout: RolloutDetailView }) {
  const restoring = rollout.rollbackTargets !== null;
  return (
    <>
      {rollout.waves.map((w) => {
        const started = w.wave < rollout.startedWaves;
        return (
          <section key={w.wave} className="wave" data-wave={w.wave} aria-labelledby={`wave-${w.wave}`}>
            <h3 id={`wave-${w.wave}`}>
              {waveName(w.wave)}
              {w.deadline ? (
                <>
                  {' '}
                  · reports due by <time dateTime={w.deadline}>{new Date(w.deadline).toLocaleString()}</time>
                </>
              ) : (
                ' · not started'
              )}
            </h3>
            <div className="table-scroll">
              <table>
                <TableHead caption={`Hosts of ${waveName(w.wave).toLowerCase()}`} columns={['Host', 'Outcome', ...(restoring ? ['Restored'] : [])]} />
                <tbody>
                  {w.hosts.map((h) => (
                    <tr key={h.host} data-host={h.host} data-outcome={outcomeOf(h, started)}>
                      <td>
                        <Link href={`/nodes/${encodeURIComponent(h.host)}`}>{h.host}</Link>
                      </td>
                      <td>
                        <StateBadge state={outcomeOf(h, started)} />
                      </td>
                      {restoring && <td>{rollout.rollbackTargets?.includes(h.host) ? <StateBadge state={h.restored ?? 'pending'} /> : '—'}</td>}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        );
      })}
    </>
  );
}
