import { useEffect, useId, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { hourLabel, type ChartSpec } from './trendSeries.ts';

// Okabe–Ito: told apart by people with the common colour-vision deficiencies; the dashes tell the lines apart without colour.
const colours = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7f7f7f'];
const dashes = [[], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4], [1, 2], [12, 6]];
const height = 220;

const cssColour = (name: string, fallback: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

function optionsOf(spec: ChartSpec, width: number): uPlot.Options {
  const text = cssColour('--text', '#1b1f24');
  const grid = { stroke: cssColour('--line', '#d5dae1'), width: 1 };
  return {
    width,
    height,
    // The hours are UTC, as the tables below say.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max)] } },
    // A key, not a read-out at the cursor: the numbers are in the table.
    legend: { live: false },
    axes: [
      { stroke: text, grid, ticks: grid },
      {
        stroke: text,
        grid,
        ticks: grid,
        size: 84,
        // Counts tick at whole numbers only.
        ...(spec.integer ? { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000] } : {}),
        values: (_u, splits) => splits.map((v) => spec.format(v)),
      },
    ],
    series: [
      { label: 'hour (UTC)' },
      ...spec.series.map((s, i) => ({
        label: s.label,
        stroke: colours[i % colours.length],
        dash: dashes[i % dashes.length],
        width: 2,
        points: { show: true, size: 5 },
        spanGaps: false,
      })),
    ],
  };
}

/**
 * One trend drawn with uPlot (canvas, 22 KB gzipped, bundled: the console works offline), and the same numbers as a
 * table for whoever cannot see the chart: the canvas is an image labelled with its summary, the table is the data.
 */
export function TrendChart({ spec }: { spec: ChartSpec }) {
  const titleId = useId();
  const holder = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = holder.current;
    if (!el) return;
    const data: uPlot.AlignedData = [spec.hours.map((h) => Date.parse(h) / 1000), ...spec.series.map((s) => s.values)];
    const chart = new uPlot(optionsOf(spec, Math.max(240, el.clientWidth)), data, el);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(240, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [spec]);

  const rows = spec.hours.map((hour, i) => ({ hour, values: spec.series.map((s) => s.values[i] ?? null) })).filter((r) => r.values.some((v) => v));
  return (
    <figure className="trend" aria-labelledby={titleId} data-chart={spec.key}>
      <figcaption>
        <h2 id={titleId}>{spec.title}</h2>
        <p className="muted">{spec.description}</p>
      </figcaption>
      <div ref={holder} className="trend-chart" role="img" aria-label={`${spec.title}: ${spec.summary}`} />
      <details>
        <summary>Table of {spec.title.toLowerCase()}</summary>
        {rows.length === 0 ? (
          <p>Nothing in this range.</p>
        ) : (
          <div className="table-scroll">
            <table className="counts">
              <caption className="visually-hidden">{spec.title}, hours with any (UTC)</caption>
              <thead>
                <tr>
                  <th scope="col">Hour (UTC)</th>
                  {spec.series.map((s) => (
                    <th scope="col" key={s.label}>
                      {s.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.hour} data-hour={r.hour}>
                    <th scope="row">{hourLabel(Date.parse(r.hour) / 1000)}</th>
                    {r.values.map((v, i) => (
                      <td key={spec.series[i]!.label}>{v === null ? '–' : spec.format(v)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </details>
    </figure>
  );
}
