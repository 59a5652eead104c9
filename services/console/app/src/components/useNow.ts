import { useEffect, useState } from 'react';

/** The clock, re-read every `intervalMs` while `ticking` (so "so far" and "ago" move without a reload). */
export function useNow(intervalMs: number, ticking = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs, ticking]);
  return now;
}
