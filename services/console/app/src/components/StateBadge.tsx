/** A lifecycle state as a badge: the word itself (never colour alone) with a colour by kind. */
export function StateBadge({ state }: { state: string }) {
  return <span className={`badge state-${state}`}>{state}</span>;
}
