import { Link } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import { useResource } from '../api/useResource.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { WorkflowSteps } from '../workflows/WorkflowSteps.tsx';

/** One workflow, its steps moving live. */
export function WorkflowPage({ workflowId }: { workflowId: string }) {
  const { client } = useSignedIn();
  const workflow = useResource(`workflow:${workflowId}`, (minSeq, signal) => client.workflow(workflowId, minSeq, signal));
  useLiveReload(workflow, subjectOf.workflow(workflowId));
  return (
    <section aria-labelledby="workflow-title">
      <h1 id="workflow-title">Workflow {workflowId}</h1>
      <ProblemAlert error={workflow.error} />
      {workflow.data && (
        <>
          <p>
            Node <Link href={`/nodes/${encodeURIComponent(workflow.data.nodeId)}`}>{workflow.data.nodeId}</Link> at site {workflow.data.siteId}
          </p>
          <WorkflowSteps workflow={workflow.data} />
        </>
      )}
    </section>
  );
}
