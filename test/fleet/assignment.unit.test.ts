import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AssignmentState } from '../../schemas/fleet/assignmentState.ts';
import type { PublishedModuleVersion, TemplateSpec } from '../../schemas/fleet/closure.ts';
import { assignmentAggregate } from '../../services/fleet/assignment/assignment.ts';
import { assignTemplate, pinModule, unpinModule } from '../../services/fleet/assignment/assignmentCommands.ts';
import type { CommandDefinition } from '../../services/platform/commands/commandDefinition.ts';
import { DomainError } from '../../schemas/platformError.ts';
import { type FakeLog, loaderOf } from './assignmentLog.ts';

const context = { commandId: 'cmd-a-01', actor: 'spec', now: '2026-12-06T00:00:00.000Z' };
const v = (name: string, version: string, more: Partial<PublishedModuleVersion> = {}): PublishedModuleVersion => ({
  name,
  version,
  provides: [],
  requires: [],
  exclusive: [],
  ...more,
});
const catalogue = [
  v('nginx', '1.24.0', { requires: [{ module: 'openssl', range: '^3' }] }),
  v('nginx', '1.26.1', { requires: [{ module: 'openssl', range: '>=3.1.0' }] }),
  v('openssl', '3.0.0'),
  v('openssl', '3.2.0'),
  v('curl', '8.5.0', { provides: ['http-client'], exclusive: ['http-client'] }),
  v('wget', '1.21.0', { provides: ['http-client'] }),
];
const templates: TemplateSpec[] = [
  { name: 'web', requires: [{ module: 'nginx', range: '^1.24' }], includes: ['base'] },
  { name: 'base', requires: [{ module: 'curl', range: '*' }], includes: [] },
];
const log = (assignments: Record<string, AssignmentState> = {}, more: Partial<FakeLog> = {}): FakeLog => ({
  nodes: { n1: 'deployed', n2: 'enrolled', gone: 'retired' },
  templates,
  catalogue,
  assignments,
  ...more,
});

async function run(command: CommandDefinition, payload: unknown, fake: FakeLog) {
  const parsed: { nodeId: string } = command.schema.parse(payload);
  const state = fake.assignments?.[parsed.nodeId] ?? assignmentAggregate.initialState;
  const dependencies = await command.dependencies!(parsed, loaderOf(fake));
  try {
    return { events: command.decide(parsed, state, { ...context, dependencies }) as { type: string; data: Record<string, unknown> }[] };
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, issues: err.issues };
    throw err;
  }
}

const after = (events: readonly { type: string; data: unknown }[], state: AssignmentState = { exists: false }) =>
  events.reduce((s, e) => assignmentAggregate.evolve(s, e as never), state);

describe('fleet.assignTemplate', () => {
  it("records the host's plan: the template's closure through includes and requires, highest versions, digest of the plan", async () => {
    const result = await run(assignTemplate, { nodeId: 'n1', template: 'web' }, log());
    const plan = { curl: '8.5.0', nginx: '1.26.1', openssl: '3.2.0' };
    expect(result).toEqual({
      events: [
        {
          type: 'HostPlanAssigned',
          data: { nodeId: 'n1', template: 'web', pins: [], plan, planDigest: createHash('sha256').update(JSON.stringify(plan)).digest('hex') },
        },
      ],
    });
  });

  it('assigning the same template again appends nothing; after a redefinition it re-resolves (nothing else does)', async () => {
    const first = await run(assignTemplate, { nodeId: 'n1', template: 'web' }, log());
    const state = after(first.events!);
    expect(await run(assignTemplate, { nodeId: 'n1', template: 'web' }, log({ n1: state }))).toEqual({ events: [] });
    const narrowed = [{ ...templates[0]!, requires: [{ module: 'nginx', range: '~1.24' }] }, templates[1]!];
    const again = await run(assignTemplate, { nodeId: 'n1', template: 'web' }, log({ n1: state }, { templates: narrowed }));
    expect(again.events?.[0]?.data.plan).toEqual({ curl: '8.5.0', nginx: '1.24.0', openssl: '3.2.0' });
  });

  it('a plan may be assigned to an enrolled node ahead of its deploy; an unknown or retired node gets none', async () => {
    expect((await run(assignTemplate, { nodeId: 'n2', template: 'web' }, log())).events).toHaveLength(1);
    expect((await run(assignTemplate, { nodeId: 'nowhere', template: 'web' }, log())).code).toBe('NOT_FOUND');
    expect((await run(assignTemplate, { nodeId: 'gone', template: 'web' }, log())).code).toBe('ILLEGAL_TRANSITION');
    const undefinedTemplate = await run(assignTemplate, { nodeId: 'n1', template: 'nope' }, log());
    expect([undefinedTemplate.code, undefinedTemplate.issues]).toEqual([
      'CLOSURE_CONFLICT',
      [{ path: 'TEMPLATE_UNKNOWN', message: expect.stringMatching(/^nope /) }],
    ]);
  });

  it('CLOSURE_CONFLICT lists every conflict with its code, and appends nothing', async () => {
    const broken: TemplateSpec[] = [
      {
        name: 'web',
        requires: [
          { module: 'nginx', range: '^1.24' },
          { module: 'haproxy', range: '*' },
        ],
        includes: ['base', 'missing'],
      },
      {
        name: 'base',
        requires: [
          { module: 'curl', range: '*' },
          { module: 'wget', range: '*' },
        ],
        includes: [],
      },
    ];
    const result = await run(assignTemplate, { nodeId: 'n1', template: 'web', pins: [{ module: 'nginx', version: '2.0.0' }] }, log({}, { templates: broken }));
    expect(result.code).toBe('CLOSURE_CONFLICT');
    expect(result.issues).toEqual([
      { path: 'EXCLUSIVE_CONFLICT', message: 'http-client: curl@8.5.0, wget@1.21.0' },
      { path: 'MODULE_UNKNOWN', message: 'haproxy: * (from template:web)' },
      { path: 'RANGE_UNSATISFIABLE', message: 'nginx: =2.0.0 (from pin), ^1.24 (from template:web)' },
      { path: 'TEMPLATE_UNKNOWN', message: 'missing (from template:web)' },
    ]);
  });
});

describe('fleet.pinModule and fleet.unpinModule', () => {
  it('refuses (to be decided again on fresh reads) when the assignment changed after its inputs were read', async () => {
    const assigned = after((await run(assignTemplate, { nodeId: 'n1', template: 'web' }, log())).events!);
    const command = pinModule.schema.parse({ nodeId: 'n1', module: 'nginx', version: '1.24.0' });
    const stale = await pinModule.dependencies!(command, loaderOf(log()));
    expect(() => pinModule.decide(command, assigned, { ...context, dependencies: stale })).toThrow(
      expect.objectContaining({ code: 'CONCURRENCY_CONFLICT' }) as Error,
    );
  });

  it('a pin holds a version on top of the template; unpinning gives the template the module back; unpinning again is a no-op', async () => {
    const assigned = after((await run(assignTemplate, { nodeId: 'n1', template: 'web' }, log())).events!);
    const pinned = await run(pinModule, { nodeId: 'n1', module: 'nginx', version: '1.24.0' }, log({ n1: assigned }));
    expect(pinned.events?.[0]?.data).toMatchObject({ pins: [{ module: 'nginx', version: '1.24.0' }], plan: { nginx: '1.24.0', openssl: '3.2.0' } });
    const withPin = after(pinned.events!, assigned);
    expect(await run(pinModule, { nodeId: 'n1', module: 'nginx', version: '1.24.0' }, log({ n1: withPin }))).toEqual({ events: [] });
    const unpinned = await run(unpinModule, { nodeId: 'n1', module: 'nginx' }, log({ n1: withPin }));
    expect(unpinned.events?.[0]?.data).toMatchObject({ pins: [], plan: { nginx: '1.26.1' } });
    expect(await run(unpinModule, { nodeId: 'n1', module: 'nginx' }, log({ n1: after(unpinned.events!, withPin) }))).toEqual({ events: [] });
  });

  it('a pin of an unpublished version is refused with the conflict; a host with no template runs its pins alone', async () => {
    const refused = await run(pinModule, { nodeId: 'n1', module: 'openssl', version: '9.9.9' }, log());
    expect([refused.code, refused.issues?.map((i) => i.path)]).toEqual(['CLOSURE_CONFLICT', ['RANGE_UNSATISFIABLE']]);
    const alone = await run(pinModule, { nodeId: 'n2', module: 'nginx', version: '1.24.0' }, log());
    expect(alone.events?.[0]?.data).toMatchObject({ template: null, plan: { nginx: '1.24.0', openssl: '3.2.0' } });
  });
});
