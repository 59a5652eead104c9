/**
 * The one-way layers of ARCHITECTURE.md ("Layers"), checked on every `npm test` (`npm run lint:boundaries`).
 *
 * | layer                                        | may import                                              |
 * | -------------------------------------------- | ------------------------------------------------------- |
 * | schemas/                                     | nothing of ours                                          |
 * | services/platform/                           | schemas/                                                 |
 * | plugins/sdk/                                 | schemas/, services/platform/                             |
 * | services/<module>/ (domain modules)          | the above; another module only through schemas/          |
 * | services/{workflow,agents,commands,plugins}/ | all of the above (the engine)                            |
 * | projections/                                 | schemas/, services/platform/                             |
 * | services/{api,stack}/, scripts/ (roots)      | everything in the product                                |
 * | daemon/ (agents)                             | schemas/, services/platform/                             |
 * | daemon/simulator/, test/, scripts/bench/     | anything; product code never imports them               |
 *
 * Paths are relative to the cruise's base directory, so the self-test (test/unit/boundaries.unit.test.ts) runs
 * these same rules over a small tree it writes to a temporary folder.
 */

// Development-only code: may import anything, and nothing in the product may import it.
const devOnly = '^(daemon/simulator|test|scripts/bench|scripts/emulatedSite)/';
const engine = '^services/(workflow|agents|commands|plugins)/';
const roots = '^services/(api|stack)/';
// Every services/<folder> that is neither the base layer, the engine nor a composition root is a domain module.
const domainModule = '^services/(?!(platform|workflow|agents|commands|plugins|api|stack)/)([^/]+)/';
const allOurs = '^(schemas|services|projections|plugins|daemon|scripts|test)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'schemas-import-nothing-of-ours',
      comment: 'schemas/ is the contract: zod shapes, subjects, ids, error codes. It depends on no code of ours.',
      severity: 'error',
      from: { path: '^schemas/' },
      to: { path: allOurs, pathNot: '^schemas/' },
    },
    {
      name: 'platform-imports-only-schemas',
      comment: 'services/platform/ is the base layer every service stands on: it may use only schemas/.',
      severity: 'error',
      from: { path: '^services/platform/' },
      to: { path: allOurs, pathNot: '^(schemas|services/platform)/' },
    },
    {
      name: 'sdk-imports-only-base',
      comment: 'plugins/sdk/ is the authoring API: schemas/ and services/platform/ only, never runtime internals.',
      severity: 'error',
      from: { path: '^plugins/sdk/' },
      to: { path: allOurs, pathNot: '^(schemas|services/platform|plugins/sdk)/' },
    },
    {
      name: 'plugins-import-only-sdk',
      comment: 'A plugin (built in or third party) uses the SDK and the contract, as an outside plugin would.',
      severity: 'error',
      from: { path: '^plugins/(?!sdk/)[^/]+/' },
      to: { path: allOurs, pathNot: '^(schemas|plugins)/' },
    },
    {
      name: 'module-imports-base-only',
      comment: 'A domain module uses schemas/, services/platform/ and plugins/sdk/; never the engine, a root, projections or agents.',
      severity: 'error',
      from: { path: domainModule },
      to: { path: allOurs, pathNot: '^(schemas|services/platform|plugins/sdk|services/[^/]+)/' },
    },
    {
      name: 'module-imports-no-other-module',
      comment: 'Domain modules talk to each other only through the schemas/ contract (commands, events, subjects).',
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: `^services/(platform|workflow|agents|commands|plugins|api|stack)/` },
      to: { path: domainModule, pathNot: '^services/$1/' },
    },
    {
      name: 'module-imports-no-engine-or-root',
      comment: 'Domain modules sit below the engine and the composition roots.',
      severity: 'error',
      from: { path: domainModule },
      to: { path: `${engine}|${roots}` },
    },
    {
      name: 'engine-imports-no-root-projection-or-agent',
      comment: 'The engine stands on the domain modules; projections, agents and the composition roots sit beside or above it.',
      severity: 'error',
      from: { path: engine },
      to: { path: `${roots}|^(projections|daemon|scripts|test)/|^plugins/(?!sdk/)` },
    },
    {
      name: 'projections-import-only-base',
      comment: 'Read models fold events: schemas/ and services/platform/ only.',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: allOurs, pathNot: '^(schemas|services/platform|projections)/' },
    },
    {
      name: 'daemon-imports-only-base',
      comment: 'Agents run on nodes and sites: schemas/ and services/platform/ only, never a service.',
      severity: 'error',
      from: { path: '^daemon/', pathNot: '^daemon/simulator/' },
      to: { path: allOurs, pathNot: '^(schemas|services/platform|daemon)/|^daemon/simulator/' },
    },
    {
      name: 'product-never-imports-dev-only',
      comment: 'daemon/simulator, test/ and the bench and emulated-site scripts are for dev and test; the product never loads them.',
      severity: 'error',
      from: { path: allOurs, pathNot: devOnly },
      to: { path: devOnly },
    },
    {
      name: 'no-file-cycles',
      comment: 'No file imports itself through others.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment: 'No two folders import each other, directly or around a ring.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^services/console/app/|^daemon/simulator/fixtures/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
