/** One quota dimension: used and reserved as parts of the limit, with the numbers in words beside the bar. */
export function QuotaBar({ label, used, reserved, limit, unit = '' }: { label: string; used: number; reserved: number; limit: number; unit?: string }) {
  const pct = (n: number) => (limit > 0 ? Math.min(100, (n / limit) * 100) : 0);
  const text = `${label}: ${used}${unit} used, ${reserved}${unit} reserved of ${limit}${unit}`;
  return (
    <div className="quota" role="img" aria-label={text}>
      <span className="quota-label">{label}</span>
      <span className="quota-bar" aria-hidden="true">
        <span className="quota-used" style={{ width: `${pct(used)}%` }} />
        <span className="quota-reserved" style={{ width: `${pct(reserved)}%` }} />
      </span>
      <span className="quota-numbers" aria-hidden="true">
        {used} + {reserved} / {limit}
        {unit}
      </span>
    </div>
  );
}
