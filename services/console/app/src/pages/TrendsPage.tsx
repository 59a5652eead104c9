import { useCallback, useMemo, useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { TrendChart } from '../trends/TrendChart.tsx';
import { chartsOf, formatDuration, formatRate } from '../trends/trendSeries.ts';

const ranges = { '24': 'Last 24 hours', '168': 'Last 7 days' } as const;
type Range = keyof typeof ranges;
const hourMs = 3_600_000;

/**
 * Trends of the fleet or one site, hour by hour, from the `trends` read model; live as workflows run. A tenant sees
 * its own operations' (the API answers a tenant token with nothing else).
 */
export function TrendsPage() {
  const { client, session } = useSignedIn();
  const [site, setSite] = useState('');
  const [range, setRange] = useState<Range>('24');
  const sites = useResource('sites', (_minSeq, signal) => client.sites(signal));
  const load = useCallback(
    (minSeq: number | undefined, signal: AbortSignal) => {
      const to = Date.now();
      const from = new Date(to - (Number(range) - 1) * hourMs).toISOString();
      return client.trends({ site: site || undefined, from, to: new Date(to).toISOString(), minSeq }, signal);
    },
    [client, site, range],
  );
  const trends = useResource(`trends:${site}:${range}`, load);
  useLiveReload(trends, subjectOf.anyNodeOrWorkflow);
  const charts = useMemo(() => (trends.data ? chartsOf(trends.data) : []), [trends.data]);
  const totals = trends.data?.stepTotals ?? [];

  return (
    <section aria-labelledby="trends-title">
      <h1 id="trends-title">Trends</h1>
      {session.tenantId !== null && <p className="scope-note">The operations of tenant {session.tenantId} only: the nodes and instances it holds.</p>}
      <form className="filters" aria-label="Trend filters" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="trend-site">Site</label>
          <select id="trend-site" value={site} onChange={(e) => setSite(e.target.value)}>
            <option value="">all sites</option>
            {sites.data?.items.map((s) => (
              <option key={s.siteId} value={s.siteId}>
                {s.siteId}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="trend-range">Range</label>
          <select id="trend-range" value={range} onChange={(e) => setRange(e.target.value as Range)}>
            {Object.entries(ranges).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ProblemAlert error={trends.error} />
      <div className="trends">
        {charts.map((spec) => (
          <TrendChart key={spec.key} spec={spec} />
        ))}
      </div>
      {trends.data && (
        <>
          <h2>Steps over the range</h2>
          {totals.length === 0 ? (
            <p>No steps succeeded in this range.</p>
          ) : (
            <div className="table-scroll">
              <table className="counts" aria-label="Steps over the range">
                <thead>
                  <tr>
                    <th scope="col">Step</th>
                    <th scope="col">Succeeded</th>
                    <th scope="col">p50</th>
                    <th scope="col">p95</th>
                    <th scope="col">Throughput</th>
                  </tr>
                </thead>
                <tbody>
                  {totals.map((s) => (
                    <tr key={s.stepId} data-step={s.stepId}>
                      <th scope="row">{s.stepId}</th>
                      <td>{s.count}</td>
                      <td>{formatDuration(s.p50Ms)}</td>
                      <td>{formatDuration(s.p95Ms)}</td>
                      <td>{s.bytesPerSecond === null ? '–' : formatRate(s.bytesPerSecond)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
