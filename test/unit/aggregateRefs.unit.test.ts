import { describe, expect, it } from 'vitest';
import { aggregateRef, type AggregateRef } from '../../schemas/aggregateRef.ts';
import { nodeRef } from '../../schemas/metal/nodeState.ts';
import { workflowRef } from '../../schemas/metal/workflowState.ts';
import { secretRef } from '../../schemas/secrets/secretState.ts';
import { siteRef } from '../../schemas/site/siteState.ts';
import { agentRef } from '../../schemas/trust/agentState.ts';
import { approversRef } from '../../schemas/trust/approversState.ts';
import { publishersRef } from '../../schemas/fleet/publishers.ts';
import { moduleRef } from '../../schemas/fleet/modules.ts';
import { accountRef } from '../../schemas/vps/accountState.ts';
import { flavorRef } from '../../schemas/vps/flavorState.ts';
import { instanceRef } from '../../schemas/vps/instanceState.ts';
import { poolRef } from '../../schemas/vps/poolState.ts';
import { tenantRef } from '../../schemas/vps/tenantState.ts';
import { allCommands } from '../../services/api/commandCatalog.ts';
import { nodeAggregate } from '../../services/metal/node/node.ts';
import { resolveAggregate } from '../../services/platform/commands/commandDefinition.ts';
import { secretAggregate } from '../../services/secrets/secret/secret.ts';
import { siteAggregate } from '../../services/site/site/site.ts';
import { agentAggregate } from '../../services/trust/agent/agent.ts';
import { approversAggregate } from '../../services/trust/approvers/approvers.ts';
import { publishersAggregate } from '../../services/fleet/publishers/publishers.ts';
import { moduleAggregate } from '../../services/fleet/module/module.ts';
import { accountAggregate } from '../../services/vps/account/account.ts';
import { flavorAggregate } from '../../services/vps/flavor/flavor.ts';
import { instanceAggregate } from '../../services/vps/instance/instance.ts';
import { poolAggregate } from '../../services/vps/pool/pool.ts';
import { tenantAggregate } from '../../services/vps/tenant/tenant.ts';
import { workflowAggregate } from '../../services/workflow/workflow/workflow.ts';

// A decider reads another aggregate through the contract's reference; the kernel must find exactly the owning
// module's fold for it, or the decision would be taken on a state that never changes (or on another aggregate's).
describe('aggregate references', () => {
  const owners = [
    [siteRef, siteAggregate],
    [poolRef, poolAggregate],
    [flavorRef, flavorAggregate],
    [instanceRef, instanceAggregate],
    [tenantRef, tenantAggregate],
    [nodeRef, nodeAggregate],
    [workflowRef, workflowAggregate],
    [agentRef, agentAggregate],
    [secretRef, secretAggregate],
    [approversRef, approversAggregate],
    [publishersRef, publishersAggregate],
    [moduleRef, moduleAggregate],
    [accountRef, accountAggregate],
  ] as const;

  it.each(owners.map(([ref, owner]) => [`${ref.module}.${ref.type}`, ref, owner] as const))('%s resolves to its module’s fold', (_name, ref, owner) => {
    expect(resolveAggregate(ref as AggregateRef<unknown>)).toBe(owner);
  });

  it('a definition resolves to itself', () => {
    expect(resolveAggregate(nodeAggregate)).toBe(nodeAggregate);
  });

  it('every aggregate a command of the catalog appends to is defined for references', () => {
    for (const command of allCommands) {
      expect(resolveAggregate(aggregateRef(command.aggregate.module, command.aggregate.type))).toBe(command.aggregate);
    }
  });

  it('refuses a reference no module defines', () => {
    expect(() => resolveAggregate(aggregateRef('metal', 'nothing'))).toThrow(/metal\.nothing is not defined/);
  });
});
