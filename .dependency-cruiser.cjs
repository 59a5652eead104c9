/**
 * The one-way layers of ARCHITECTURE.md ("Layers"), checked on every `npm test` (`npm run lint:boundaries`).
 *
 * | layer                                        | may import                                              |
 * | -------------------------------------------- | ------------------------------------------------------- |
 * | schemas/                                     | nothing of ours                                          |
 * | services/platform/                           | schemas/                                                 |
 * | plugins/sdk/                                 | schemas/ (no arrow from plugins/ back up into services/)  |
 * | services/<module>/ (domain modules)          | the above; another module only through schemas/          |
 * | services/{workflow,agents,commands,plugins}/ | all of the above (the engine)                            |
 * | services/processes/<process>/ (reactors)     | the engine and all below it, projections/ (read models); |
 * |                                              | never a root, an agent or another process                |
 * | projections/ (folds, SQL, queries, readers)  | schemas/ only                                            |
 * | services/projectors/ (the projector runner)  | schemas/, services/platform/, projections/; started by a |
 * |                                              | composition root only                                    |
 * | services/{api,stack}/, scripts/ (roots)      | everything in the product                                |
 * | daemon/ (agents)                             | schemas/, services/platform/                             |
 * | services/console/app/ (the browser app)      | schemas/ only (and npm packages, never node: built-ins)  |
 * | daemon/simulator/, test/, scripts/bench/     | anything; product code never imports them               |
 *
 * Paths are relative to the cruise's base directory, so the self-test (test/unit/boundaries.unit.test.ts) runs
 * these same rules over a small tree it writes to a temporary folder.
 */

// Development-only code: may import anything, and nothing in the product may import it.
const devOnly = '^(daemon/simulator|test|scripts/bench|scripts/emulatedSite)/';
const engine = '^services/(workflow|agents|commands|plugins)/';
const roots = '^services/(api|stack)/';
// The long-running reactors, one folder each: above the engine, below the composition roots that start them.
const processes = '^services/processes/';
// The runner of the read models' projectors (durable consumer, batches, replay, file swap): it puts the event store and
// NATS of services/platform/ under the folds of projections/, so projections/ itself needs nothing above schemas/.
const projectorRunner = '^services/projectors/';
// The web console's browser code: bundled by Vite into the page, so it can hold nothing that runs on the server.
const browserApp = '^services/console/app/';
// Every services/<folder> that is neither the base layer, the engine nor a composition root is a domain module (the
// console's build scripts in services/console/ are; its browser app has a rule of its own).
const domainModule = '^services/(?!(platform|workflow|agents|commands|plugins|processes|projectors|api|stack)/|console/app/)([^/]+)/';
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
      comment: 'plugins/sdk/ is the authoring API on the contract alone (schemas/), never the services that run it.',
      severity: 'error',
      from: { path: '^plugins/sdk/' },
      to: { path: allOurs, pathNot: '^(schemas|plugins/sdk)/' },
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
      from: { path: '^services/([^/]+)/', pathNot: `^services/(platform|workflow|agents|commands|plugins|processes|projectors|api|stack)/|${browserApp}` },
      to: { path: domainModule, pathNot: '^services/$1/' },
    },
    {
      name: 'module-imports-no-engine-or-root',
      comment: 'Domain modules sit below the engine, the processes and the composition roots.',
      severity: 'error',
      from: { path: domainModule },
      to: { path: `${engine}|${processes}|${roots}` },
    },
    {
      name: 'engine-imports-no-root-projection-or-agent',
      comment: 'The engine stands on the domain modules; projections, agents, the processes and the composition roots sit beside or above it.',
      severity: 'error',
      from: { path: engine },
      to: { path: `${roots}|${processes}|^(projections|daemon|scripts|test)/|^plugins/(?!sdk/)` },
    },
    {
      name: 'process-imports-no-root-or-agent',
      comment:
        'A process (services/processes/<process>/) stands on the engine, the domain modules, the read models and the base; the composition roots (services/api, services/stack) start it, agents run elsewhere.',
      severity: 'error',
      from: { path: processes },
      to: { path: `${roots}|^(daemon|scripts)/|^plugins/(?!sdk/)` },
    },
    {
      name: 'process-imports-no-other-process',
      comment: "Each process is one folder; two processes talk through subjects and events, never through each other's code.",
      severity: 'error',
      from: { path: '^services/processes/([^/]+)/' },
      to: { path: processes, pathNot: '^services/processes/$1/' },
    },
    {
      name: 'projections-import-only-base',
      comment:
        'Read models fold events into SQL and answer queries on the contract alone (schemas/); the runner that feeds them from the log is services/projectors/, so no arrow runs from projections/ back up into services/.',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: allOurs, pathNot: '^(schemas|projections)/' },
    },
    {
      name: 'projector-runner-imports-only-base',
      comment: 'services/projectors/ runs the folds of projections/ over the event store and NATS of services/platform/: nothing else of ours.',
      severity: 'error',
      from: { path: projectorRunner },
      to: { path: allOurs, pathNot: '^(schemas|services/platform|projections|services/projectors)/' },
    },
    {
      name: 'projector-runner-started-by-roots',
      comment: 'Only a composition root starts the projectors; every other reader of a read model goes through its ReadModelReader in projections/.',
      severity: 'error',
      from: { path: allOurs, pathNot: `${roots}|^scripts/|${devOnly}|${projectorRunner}` },
      to: { path: projectorRunner },
    },
    {
      name: 'daemon-imports-only-base',
      comment: 'Agents run on nodes and sites: schemas/ and services/platform/ only, never a service.',
      severity: 'error',
      from: { path: '^daemon/', pathNot: '^daemon/simulator/' },
      to: { path: allOurs, pathNot: '^(schemas|services/platform|daemon)/|^daemon/simulator/' },
    },
    {
      name: 'console-app-imports-only-schemas',
      comment: 'The browser app talks to the product over HTTP only: of our code it may use the schemas/ contract and its own files.',
      severity: 'error',
      from: { path: browserApp },
      to: { path: allOurs, pathNot: `^schemas/|${browserApp}` },
    },
    {
      name: 'console-app-imports-no-node-builtin',
      comment: 'The browser app runs in a browser: Node built-ins (node:fs, node:crypto, …) do not exist there.',
      severity: 'error',
      from: { path: browserApp },
      to: { dependencyTypes: ['core'] },
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
    exclude: { path: '(^|/)node_modules/|^daemon/simulator/fixtures/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
