const hourMs = 3_600_000;

/** Milliseconds since the epoch of an ISO time, or null for one that does not parse. */
export function epochMsOf(time: string): number | null {
  const ms = Date.parse(time);
  return Number.isFinite(ms) ? ms : null;
}

/** The hour bucket of an epoch time: the top of its hour, ISO (`2026-12-06T22:00:00.000Z`). */
export const hourOf = (ms: number): string => new Date(Math.floor(ms / hourMs) * hourMs).toISOString();

/** Every hour bucket from `fromMs`'s hour up to, not including, `toMs`'s hour (oldest first). */
export function hoursBetween(fromMs: number, toMs: number): string[] {
  const hours: string[] = [];
  for (let t = Math.floor(fromMs / hourMs) * hourMs; t < toMs; t += hourMs) hours.push(new Date(t).toISOString());
  return hours;
}

export const msPerHour = hourMs;
