import type { ModuleVersionView, PublisherView } from '../api/shapes.ts';
import { TableHead } from '../components/TableHead.tsx';

/** Where the key a version was signed with stands now: the publisher's current key, rotated out, or revoked with it. */
function keyStanding(key: string | null, publisher: PublisherView | undefined): string {
  if (key === null) return 'key not recorded';
  if (!publisher) return 'publisher unknown';
  if (publisher.status === 'revoked') return 'publisher revoked';
  if (publisher.publicKey === key) return 'current key';
  return publisher.retiredKeys.includes(key) ? 'rotated out' : 'not a key of the publisher';
}

const requirement = (r: ModuleVersionView['manifest']['requires'][number]) => `${'module' in r ? r.module : r.capability} ${r.range}`;

/** A module's published versions in publishing order: who signed each and with which key, its digest and what it needs. */
export function VersionTable({ versions, publishers }: { versions: readonly ModuleVersionView[]; publishers: readonly PublisherView[] }) {
  const byId = new Map(publishers.map((p) => [p.publisherId, p]));
  return (
    <div className="table-scroll">
      <table>
        <TableHead caption="Published versions" columns={['Version', 'Signed by', 'Signing key', 'Manifest sha256', 'Provides', 'Requires', 'Published']} />
        <tbody>
          {versions.map((v) => (
            <tr key={v.version} data-version={v.version}>
              <td>{v.version}</td>
              <td>{v.publisherId}</td>
              <td>
                {v.signingKey && <code>{v.signingKey}</code>} ({keyStanding(v.signingKey, byId.get(v.publisherId))})
              </td>
              <td>
                <code title={v.manifestSha256}>{v.manifestSha256.slice(0, 12)}…</code>
              </td>
              <td>{v.manifest.provides.join(', ') || '—'}</td>
              <td>{v.manifest.requires.map(requirement).join(', ') || '—'}</td>
              <td>
                <time dateTime={v.publishedAt}>{new Date(v.publishedAt).toLocaleString()}</time> by {v.publishedBy}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
