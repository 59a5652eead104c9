import { useState } from 'react';
import { useSignedIn } from '../api/apiContext.tsx';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { AssignmentTable } from './AssignmentTable.tsx';

/** Hosts' plans a page at a time (every host, or those whose plan has `module`), live as assignments change. */
export function AssignmentList({ module }: { module?: string }) {
  const { client } = useSignedIn();
  const [pages, setPages] = useState<string[]>([]);
  const cursor = pages.at(-1) ?? null;
  const list = useResource(`assignments:${module ?? ''}:${cursor ?? ''}`, (minSeq, signal) =>
    client.assignments({ ...(module ? { module } : {}), cursor }, minSeq, signal),
  );
  useLiveReload(list, subjectOf.fleetOf('assignment'));
  const next = list.data?.nextCursor;
  return (
    <>
      <ProblemAlert error={list.error} />
      {list.data?.items.length === 0 && pages.length === 0 && <p>{module ? `No host's plan has ${module}.` : 'No host is assigned a plan.'}</p>}
      {list.data && list.data.items.length > 0 && <AssignmentTable assignments={list.data.items} {...(module ? { module } : {})} />}
      {(pages.length > 0 || next) && (
        <div className="pager">
          <button type="button" disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>
            Previous hosts
          </button>
          <button type="button" disabled={!next} onClick={() => next && setPages([...pages, next])}>
            Next hosts
          </button>
        </div>
      )}
    </>
  );
}
