import { useEffect, useRef, useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import type { NodeFilter } from '../api/client.ts';
import { useResource } from '../api/useResource.ts';
import { nodeStates } from '../../../../../schemas/metal/nodeState.ts';

/** Typed filters reach the API once typing pauses this long (each change reads every matching node again). */
const typingPauseMs = 400;

function TypedFilter({
  id,
  label,
  value,
  onChange,
  placeholder = 'any',
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  placeholder?: string;
}) {
  const [text, setText] = useState(value);
  const changed = useRef(onChange);
  changed.current = onChange;
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text.trim() === value) return;
    const timer = setTimeout(() => changed.current(text.trim()), typingPauseMs);
    return () => clearTimeout(timer);
  }, [text, value]);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder={placeholder} />
    </div>
  );
}

/** A search, site, state, pool and (for staff) tenant: what the nodes table asks the API for. */
export function NodeFilters({ filter, onChange }: { filter: NodeFilter; onChange: (f: NodeFilter) => void }) {
  const { client, session } = useSignedIn();
  const sites = useResource('sites', (_minSeq, signal) => client.sites(signal));
  const set = (patch: NodeFilter) => onChange({ ...filter, ...patch });
  return (
    <form className="filters" aria-label="Filter nodes" onSubmit={(e) => e.preventDefault()}>
      <TypedFilter id="filter-q" label="Search" value={filter.q ?? ''} onChange={(q) => set({ q })} placeholder="name, MAC, IP or serial" />
      <div className="field">
        <label htmlFor="filter-site">Site</label>
        <select id="filter-site" value={filter.siteId ?? ''} onChange={(e) => set({ siteId: e.target.value })}>
          <option value="">any</option>
          {sites.data?.items.map((s) => (
            <option key={s.siteId} value={s.siteId}>
              {s.siteId}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-state">State</label>
        <select id="filter-state" value={filter.state ?? ''} onChange={(e) => set({ state: e.target.value as NodeFilter['state'] })}>
          <option value="">any</option>
          {nodeStates.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <TypedFilter id="filter-pool" label="Pool" value={filter.poolId ?? ''} onChange={(poolId) => set({ poolId })} />
      {session.role !== 'tenant' && <TypedFilter id="filter-tenant" label="Tenant" value={filter.tenantId ?? ''} onChange={(tenantId) => set({ tenantId })} />}
    </form>
  );
}
