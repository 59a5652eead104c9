/** What the quota bars' colours mean, once for all of them: the same swatches the bars are drawn with. */
export function QuotaLegend() {
  return (
    <ul className="quota-legend" aria-label="Quota bar legend">
      <li>
        <span className="swatch quota-used" aria-hidden="true" /> Used: instances that have run, until deleted
      </li>
      <li>
        <span className="swatch quota-reserved" aria-hidden="true" /> Reserved: requested, not running yet
      </li>
      <li>
        <span className="swatch quota-free" aria-hidden="true" /> Free, up to the limit
      </li>
      <li className="muted">Numbers: used + reserved / limit</li>
    </ul>
  );
}
