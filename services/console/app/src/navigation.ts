import type { ComponentType } from 'react';
import type { Role } from './api/shapes.ts';
import { ApprovalsPage } from './pages/ApprovalsPage.tsx';
import { AutonomyPage } from './pages/AutonomyPage.tsx';
import { FleetOverviewPage } from './pages/FleetOverviewPage.tsx';
import { ModulesPage } from './pages/ModulesPage.tsx';
import { NodesPage } from './pages/NodesPage.tsx';
import { PluginsPage } from './pages/PluginsPage.tsx';
import { TrendsPage } from './pages/TrendsPage.tsx';
import { VpsPage } from './pages/VpsPage.tsx';
import { WorkflowsPage } from './pages/WorkflowsPage.tsx';

/** A top-level page: where it lives, its name in the navigation, and the roles whose API token may read what it shows. */
export interface Section {
  readonly path: string;
  readonly label: string;
  readonly page: ComponentType;
  readonly roles: readonly Role[];
}

const everyone: readonly Role[] = ['admin', 'operator', 'approver', 'viewer', 'tenant'];
const staff: readonly Role[] = ['admin', 'operator', 'approver', 'viewer'];

/**
 * The console's sections in navigation order. A section is listed for a role only where the API lets that role read
 * its data (a tenant reads no fleet-wide workflows, approvals, autonomy decisions, modules or plugins).
 */
export const sections: readonly Section[] = [
  { path: '/', label: 'Fleet overview', page: FleetOverviewPage, roles: everyone },
  { path: '/nodes', label: 'Nodes', page: NodesPage, roles: everyone },
  { path: '/workflows', label: 'Workflows', page: WorkflowsPage, roles: staff },
  // A tenant's trends are of its own operations (the API scopes them to its tenant).
  { path: '/trends', label: 'Trends', page: TrendsPage, roles: everyone },
  { path: '/approvals', label: 'Approvals', page: ApprovalsPage, roles: staff },
  { path: '/autonomy', label: 'Autonomy', page: AutonomyPage, roles: staff },
  { path: '/modules', label: 'Modules', page: ModulesPage, roles: staff },
  { path: '/vps', label: 'VPS', page: VpsPage, roles: everyone },
  { path: '/plugins', label: 'Plugins and profiles', page: PluginsPage, roles: staff },
];

export const sectionsFor = (role: Role): Section[] => sections.filter((s) => s.roles.includes(role));
