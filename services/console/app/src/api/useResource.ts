import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './client.ts';

export interface Resource<T> {
  readonly data: T | undefined;
  readonly error: ApiError | undefined;
  readonly loading: boolean;
  /** Loads again; `minSeq` asks the read model to have applied that log position first (read-your-writes). */
  readonly reload: (minSeq?: number) => void;
}

const asApiError = (err: unknown): ApiError => (err instanceof ApiError ? err : new ApiError(0, 'INTERNAL', (err as Error).message));

/**
 * Data from the API for a page: loads on mount and when `key` changes, keeps showing the last data while reloading,
 * and folds reloads asked for while one is running into one more (live events arrive in bursts).
 */
export function useResource<T>(key: string, load: (minSeq: number | undefined, signal: AbortSignal) => Promise<T>): Resource<T> {
  const [state, setState] = useState<{ key: string; data: T | undefined; error: ApiError | undefined; loading: boolean }>({
    key,
    data: undefined,
    error: undefined,
    loading: true,
  });
  const loadRef = useRef(load);
  loadRef.current = load;
  const running = useRef<{ controller: AbortController; again: number | undefined | null } | null>(null);

  const run = useCallback(
    (minSeq: number | undefined) => {
      if (running.current) {
        // One more load after this one, at the highest position asked for.
        const again = running.current.again;
        running.current.again = again === null ? minSeq : Math.max(again ?? 0, minSeq ?? 0) || undefined;
        return;
      }
      const controller = new AbortController();
      running.current = { controller, again: null };
      setState((s) => ({ ...s, loading: true }));
      loadRef
        .current(minSeq, controller.signal)
        .then(
          (data) => !controller.signal.aborted && setState({ key, data, error: undefined, loading: false }),
          (err: unknown) => !controller.signal.aborted && setState((s) => ({ ...s, error: asApiError(err), loading: false })),
        )
        .finally(() => {
          if (running.current?.controller !== controller) return;
          const again = running.current.again;
          running.current = null;
          if (again !== null && !controller.signal.aborted) run(again);
        });
    },
    [key],
  );

  useEffect(() => {
    setState({ key, data: undefined, error: undefined, loading: true });
    run(undefined);
    return () => {
      running.current?.controller.abort();
      running.current = null;
    };
  }, [key, run]);

  return { data: state.key === key ? state.data : undefined, error: state.error, loading: state.loading, reload: run };
}
