import { Link, Route, Switch, useLocation } from 'wouter';
import { useSignedIn } from './api/apiContext.tsx';
import { useLiveStatus } from './live/eventStream.tsx';
import { sectionsFor } from './navigation.ts';
import { ModulePage } from './pages/ModulePage.tsx';
import { NodeDetailPage } from './pages/NodeDetailPage.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';
import { RolloutPage } from './pages/RolloutPage.tsx';
import { WorkflowPage } from './pages/WorkflowPage.tsx';

const liveLabel = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…' } as const;

/** The signed-in frame: navigation for the role, who is signed in, whether the live stream is up, and the page. */
export function ConsoleLayout({ onSignOut }: { onSignOut: () => void }) {
  const { session } = useSignedIn();
  const status = useLiveStatus();
  const sections = sectionsFor(session.role);
  const [location] = useLocation();
  const current = (path: string) => (path === '/' ? location === '/' : location === path || location.startsWith(`${path}/`));
  return (
    <div className="layout">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Better Compute</span>
        <nav aria-label="Main">
          <ul>
            {sections.map((s) => (
              <li key={s.path}>
                <Link href={s.path} aria-current={current(s.path) ? 'page' : undefined}>
                  {s.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span className={`live live-${status}`} role="status" aria-label={`Live updates: ${liveLabel[status]}`}>
          {liveLabel[status]}
        </span>
        <span className="who">
          {session.tokenId} · {session.role === 'tenant' ? `tenant ${session.tenantId}` : session.role}
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Switch>
          {sections.map((s) => (
            <Route key={s.path} path={s.path} component={s.page} />
          ))}
          <Route path="/nodes/:nodeId">{(params) => <NodeDetailPage nodeId={params.nodeId} />}</Route>
          <Route path="/workflows/:workflowId">{(params) => <WorkflowPage workflowId={params.workflowId} />}</Route>
          <Route path="/modules/:module">{(params) => <ModulePage name={params.module} />}</Route>
          <Route path="/rollouts/:rolloutId">{(params) => <RolloutPage rolloutId={params.rolloutId} />}</Route>
          <Route component={NotFoundPage} />
        </Switch>
      </main>
    </div>
  );
}
