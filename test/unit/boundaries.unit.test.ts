import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser';
import { afterEach, describe, expect, it } from 'vitest';

// The self-test of `npm run lint:boundaries`: the repo's own rules, run over a small tree written for each case, must
// name the broken rule for a forbidden import and stay quiet for an allowed one.
const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as IConfiguration;
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** Writes `files` (path → its imports: a path in the tree, or a `node:` built-in) under a fresh folder and returns the names of the rules they break. */
async function brokenRules(files: Record<string, string[]>): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), 'bc-boundaries-'));
  roots.push(root);
  for (const [path, imports] of Object.entries(files)) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    const depth = path.split('/').length - 1;
    const up = depth === 0 ? './' : '../'.repeat(depth);
    const lines = imports.map((target, i) => `import * as m${i} from '${target.startsWith('node:') ? '' : up}${target}';\nvoid m${i};`);
    writeFileSync(join(root, path), `${lines.join('\n')}\nexport const here = ${JSON.stringify(path)};\n`);
  }
  const topFolders = [...new Set(Object.keys(files).map((path) => path.split('/')[0]!))];
  const { output } = await cruise(topFolders, {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
    tsPreCompilationDeps: true,
  });
  const result = output as ICruiseResult;
  return [...new Set(result.summary.violations.map((violation) => violation.rule.name))].sort();
}

describe('the layer check', () => {
  it('lets every layer use the ones below it', async () => {
    expect(
      await brokenRules({
        'schemas/ids.ts': [],
        'services/platform/logger.ts': ['schemas/ids.ts'],
        'plugins/sdk/defineStep.ts': ['schemas/ids.ts'],
        'plugins/talos/index.ts': ['plugins/sdk/defineStep.ts'],
        'services/metal/deploy.ts': ['plugins/sdk/defineStep.ts', 'services/platform/logger.ts'],
        'services/workflow/executor.ts': ['services/metal/deploy.ts', 'plugins/sdk/defineStep.ts'],
        'projections/nodes/nodes.ts': ['schemas/ids.ts'],
        'services/projectors/projectorGroup.ts': ['services/platform/logger.ts', 'projections/nodes/nodes.ts', 'schemas/ids.ts'],
        'daemon/agent/agent.ts': ['services/platform/logger.ts'],
        'services/processes/orchestrator/orchestrator.ts': [
          'services/workflow/executor.ts',
          'services/metal/deploy.ts',
          'projections/nodes/nodes.ts',
          'services/platform/logger.ts',
          'plugins/sdk/defineStep.ts',
          'services/processes/orchestrator/orchestration.ts',
        ],
        'services/processes/orchestrator/orchestration.ts': ['schemas/ids.ts'],
        'services/stack/start.ts': [
          'services/workflow/executor.ts',
          'projections/nodes/nodes.ts',
          'services/projectors/projectorGroup.ts',
          'services/processes/orchestrator/orchestrator.ts',
        ],
        'daemon/simulator/site.ts': ['services/stack/start.ts', 'daemon/agent/agent.ts'],
        'test/metal/deploy.int.test.ts': ['services/stack/start.ts', 'daemon/simulator/site.ts'],
      }),
    ).toEqual([]);
  });

  it('keeps schemas free of our code', async () => {
    expect(await brokenRules({ 'schemas/metal/inventory.ts': ['daemon/redfish/inventory.ts'], 'daemon/redfish/inventory.ts': [] })).toEqual([
      'schemas-import-nothing-of-ours',
    ]);
  });

  it('lets one domain module reach another only through schemas', async () => {
    expect(await brokenRules({ 'services/vps/instance.ts': ['services/secrets/masterKey.ts'], 'services/secrets/masterKey.ts': [] })).toEqual([
      'module-imports-no-other-module',
    ]);
  });

  it('keeps domain modules below the engine', async () => {
    expect(await brokenRules({ 'services/metal/node.ts': ['services/commands/registry.ts'], 'services/commands/registry.ts': [] })).toEqual([
      'module-imports-no-engine-or-root',
    ]);
  });

  it('keeps the processes below the composition roots, off agents and off each other', async () => {
    expect(
      await brokenRules({ 'services/processes/bmcMonitor/bmcMonitor.ts': ['services/api/approvalRoutes.ts'], 'services/api/approvalRoutes.ts': [] }),
    ).toEqual(['process-imports-no-root-or-agent']);
    expect(
      await brokenRules({ 'services/processes/autonomyEngine/engine.ts': ['services/stack/serviceCatalog.ts'], 'services/stack/serviceCatalog.ts': [] }),
    ).toEqual(['process-imports-no-root-or-agent']);
    expect(await brokenRules({ 'services/processes/bmcMonitor/bmcMonitor.ts': ['daemon/agent/agent.ts'], 'daemon/agent/agent.ts': [] })).toEqual([
      'process-imports-no-root-or-agent',
    ]);
    expect(
      await brokenRules({
        'services/processes/fleetSensors/fleetSensors.ts': ['services/processes/autonomyEngine/engine.ts'],
        'services/processes/autonomyEngine/engine.ts': [],
      }),
    ).toEqual(['process-imports-no-other-process']);
  });

  it('keeps the engine and the domain modules below the processes', async () => {
    expect(
      await brokenRules({
        'services/workflow/executor.ts': ['services/processes/orchestrator/fleetModel.ts'],
        'services/processes/orchestrator/fleetModel.ts': [],
      }),
    ).toEqual(['engine-imports-no-root-projection-or-agent']);
    expect(
      await brokenRules({
        'services/vps/instance/instance.ts': ['services/processes/vpsReconciler/model.ts'],
        'services/processes/vpsReconciler/model.ts': [],
      }),
    ).toEqual(['module-imports-no-engine-or-root']);
  });

  it('keeps the SDK off runtime internals', async () => {
    expect(await brokenRules({ 'plugins/sdk/index.ts': ['services/workflow/runAttempt.ts'], 'services/workflow/runAttempt.ts': [] })).toEqual([
      'sdk-imports-only-base',
    ]);
  });

  it('keeps plugins/ on the contract alone: no arrow back up into services/', async () => {
    expect(await brokenRules({ 'plugins/sdk/defineStep.ts': ['services/platform/logger.ts'], 'services/platform/logger.ts': [] })).toEqual([
      'sdk-imports-only-base',
    ]);
  });

  it('keeps agents and projections off services', async () => {
    expect(
      await brokenRules({
        'daemon/agent/joined.ts': ['services/trust/broker.ts'],
        'projections/nodes/queries.ts': ['services/metal/node.ts'],
        'services/trust/broker.ts': [],
        'services/metal/node.ts': [],
      }),
    ).toEqual(['daemon-imports-only-base', 'projections-import-only-base']);
  });

  it('keeps projections/ on the contract alone: no arrow back up into services/', async () => {
    expect(await brokenRules({ 'projections/runtime/readModelReader.ts': ['services/platform/logger.ts'], 'services/platform/logger.ts': [] })).toEqual([
      'projections-import-only-base',
    ]);
    expect(
      await brokenRules({ 'projections/nodes/projector.ts': ['services/projectors/projectorGroup.ts'], 'services/projectors/projectorGroup.ts': [] }),
    ).toEqual(['projections-import-only-base', 'projector-runner-started-by-roots']);
  });

  it('keeps the projector runner on the base and projections, started by a composition root only', async () => {
    expect(await brokenRules({ 'services/projectors/projectorGroup.ts': ['services/workflow/executor.ts'], 'services/workflow/executor.ts': [] })).toEqual([
      'projector-runner-imports-only-base',
    ]);
    expect(
      await brokenRules({
        'services/processes/fleetSensors/snapshotReader.ts': ['services/projectors/projectorGroup.ts'],
        'services/projectors/projectorGroup.ts': [],
      }),
    ).toEqual(['projector-runner-started-by-roots']);
  });

  it('keeps the browser console on the schemas contract and its own files', async () => {
    expect(
      await brokenRules({
        'schemas/metal/nodeState.ts': [],
        'services/console/app/src/nodes/NodeTable.ts': ['schemas/metal/nodeState.ts', 'services/console/app/src/api/client.ts'],
        'services/console/app/src/api/client.ts': [],
      }),
    ).toEqual([]);
    expect(
      await brokenRules({
        'services/console/app/src/api/client.ts': ['services/api/approvalRoutes.ts'],
        'services/api/approvalRoutes.ts': [],
      }),
    ).toEqual(['console-app-imports-only-schemas']);
    expect(
      await brokenRules({ 'services/console/app/src/api/shapes.ts': ['projections/workflows/approvals.ts'], 'projections/workflows/approvals.ts': [] }),
    ).toEqual(['console-app-imports-only-schemas']);
    expect(await brokenRules({ 'services/console/app/src/api/session.ts': ['node:fs'] })).toEqual(['console-app-imports-no-node-builtin']);
  });

  it('never lets the product load the simulator, tests or benches', async () => {
    expect(await brokenRules({ 'services/stack/start.ts': ['daemon/simulator/simulatedSite.ts'], 'daemon/simulator/simulatedSite.ts': [] })).toEqual([
      'product-never-imports-dev-only',
    ]);
  });

  it('finds cycles between files and between folders', async () => {
    expect(
      await brokenRules({ 'services/platform/a/one.ts': ['services/platform/b/two.ts'], 'services/platform/b/two.ts': ['services/platform/a/one.ts'] }),
    ).toEqual(['no-file-cycles', 'no-folder-cycles']);
    expect(
      await brokenRules({
        'services/platform/a/one.ts': ['services/platform/b/two.ts'],
        'services/platform/b/two.ts': ['services/platform/a/three.ts'],
        'services/platform/a/three.ts': [],
      }),
    ).toEqual(['no-folder-cycles']);
  });
});
