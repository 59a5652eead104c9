import type { PublisherView, TemplateView } from '../api/shapes.ts';
import { StateBadge } from '../components/StateBadge.tsx';
import { TableHead } from '../components/TableHead.tsx';

const requirement = (r: TemplateView['requires'][number]) => `${'module' in r ? r.module : r.capability} ${r.range}`;

/** Templates: what each requires and includes, as last defined. */
export function TemplateTable({ templates }: { templates: readonly TemplateView[] }) {
  return (
    <div className="table-scroll">
      <table>
        <TableHead caption="Templates" columns={['Template', 'Requires', 'Includes', 'Defined']} />
        <tbody>
          {templates.map((t) => (
            <tr key={t.templateId} data-template={t.templateId}>
              <td>{t.templateId}</td>
              <td>{t.requires.map(requirement).join(', ') || '—'}</td>
              <td>{t.includes.join(', ') || '—'}</td>
              <td>
                <time dateTime={t.definedAt}>{new Date(t.definedAt).toLocaleString()}</time> by {t.definedBy}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Module publishers: the key bundles must be signed with now, the keys rotated out, and whether it is revoked. */
export function PublisherTable({ publishers }: { publishers: readonly PublisherView[] }) {
  return (
    <div className="table-scroll">
      <table>
        <TableHead caption="Module publishers" columns={['Publisher', 'Status', 'Current key', 'Keys rotated out', 'Changed']} />
        <tbody>
          {publishers.map((p) => (
            <tr key={p.publisherId} data-publisher={p.publisherId}>
              <td>{p.publisherId}</td>
              <td>
                <StateBadge state={p.status} />
              </td>
              <td>
                <code>{p.publicKey}</code>
              </td>
              <td>{p.retiredKeys.length}</td>
              <td>
                <time dateTime={p.updatedAt}>{new Date(p.updatedAt).toLocaleString()}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
