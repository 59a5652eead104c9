import { HOUR_MS, type PolicyDeclaration } from '../../schemas/autonomy/policies.ts';
import type { PluginRegistryState } from '../../schemas/plugins/registryState.ts';
import { PlatformError } from '../../schemas/platformError.ts';

const chainTimeoutMs = 4 * HOUR_MS;

/** The intervention categories of the first lanes, each declared once with its owner and default disposition. */
export const builtinPolicies: readonly PolicyDeclaration[] = [
  {
    category: 'maintenance',
    owner: 'metal',
    disposition: 'auto',
    kind: 'advisory',
    advancement: false,
    approvalTimeoutMs: chainTimeoutMs,
    description: 'BMC unreachable: maintenance on (source bmc), cleared when the BMC answers again',
  },
  {
    category: 'retry',
    owner: 'metal',
    disposition: 'require',
    kind: 'destructive',
    advancement: false,
    approvalTimeoutMs: chainTimeoutMs,
    description: 'A failed node runs its failed operation again (metal.retry)',
  },
  {
    category: 'observation',
    owner: 'operations',
    disposition: 'notify',
    kind: 'advisory',
    advancement: false,
    approvalTimeoutMs: chainTimeoutMs,
    description: "A step far past its timeout, work waiting too long, a key rotation an agent never carried out, or a deployed host's agent silent",
  },
  {
    category: 'recreate',
    owner: 'vps',
    disposition: 'require',
    kind: 'destructive',
    advancement: false,
    approvalTimeoutMs: chainTimeoutMs,
    description: 'A VPS instance desired running but observed in error is deleted and created again',
  },
  {
    category: 'relocate',
    owner: 'vps',
    disposition: 'auto',
    kind: 'destructive',
    advancement: false,
    approvalTimeoutMs: chainTimeoutMs,
    description:
      "A metal-pool instance whose node is lost (its bcd node silent, or the node no longer deployed) is placed on another node and started there from its image; the lost node's copy is removed if it comes back",
  },
  {
    category: 'rotate-key',
    owner: 'trust',
    disposition: 'auto',
    kind: 'advisory',
    advancement: true,
    approvalTimeoutMs: chainTimeoutMs,
    description: 'An agent key older than its rotation age is rotated',
  },
  {
    category: 'module-health',
    owner: 'modules',
    disposition: 'notify',
    kind: 'advisory',
    advancement: false,
    approvalTimeoutMs: chainTimeoutMs,
    description:
      "A deployed host's modules differ from its pinned plan, fail their probes, or are not reported past the grace; or a host's pinned plan lags what its template resolves to now",
  },
];

/** A declared category and who declared it: a plugin's id, null when built in. */
export interface DeclaredPolicy {
  readonly declaration: PolicyDeclaration;
  readonly pluginId: string | null;
}

/** Every declared category: the built-in ones, then each registered plugin's (the registry refused any clash). */
export function declaredPolicies(registry: PluginRegistryState): DeclaredPolicy[] {
  return [
    ...builtinPolicies.map((declaration) => ({ declaration, pluginId: null })),
    ...[...registry.plugins.values()].flatMap((p) => p.policies.map((declaration) => ({ declaration, pluginId: p.pluginId }))),
  ];
}

/** Declarations by category; a category missing here is refused (`NOT_PERMITTED`). */
export class PolicyCatalog {
  readonly #byCategory: ReadonlyMap<string, PolicyDeclaration>;
  constructor(readonly declarations: readonly PolicyDeclaration[] = builtinPolicies) {
    const map = new Map<string, PolicyDeclaration>();
    for (const d of declarations) {
      // Two declarations (two plugins, or a plugin and a built-in lane) would give one category two owners.
      if (map.has(d.category)) throw new PlatformError('ALREADY_EXISTS', `category ${d.category} is declared twice`);
      map.set(d.category, d);
    }
    this.#byCategory = map;
  }
  get(category: string): PolicyDeclaration | undefined {
    return this.#byCategory.get(category);
  }
  has(category: string): boolean {
    return this.#byCategory.has(category);
  }
}
