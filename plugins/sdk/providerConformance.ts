/**
 * The conformance suite every VPS provider must pass: the promises of `ProviderClient` (idempotent create, finding a
 * crashed create, power states, idempotent delete, error kinds, pagination) checked against a real or emulated
 * account. Names and client tokens are derived from `runId`, never random, so a recorded run replays exactly.
 */
import { ProviderInstance } from '../../schemas/vps/provider.ts';
import { ProviderError } from './provider.ts';
import type { RunCommand } from './providerCommands.ts';
import { check, startHarness } from './providerConformanceHarness.ts';
import type { ConformanceHarness, ConformanceSubject } from './providerConformanceHarness.ts';

export type { ConformanceHarness, ConformanceSubject, HarnessOpenOptions } from './providerConformanceHarness.ts';

/** One independent check; it deletes what it created, also when it fails. */
export interface ConformanceCase {
  readonly name: string;
  run(harness: ConformanceHarness): Promise<void>;
}

/** The outcome of one case; `error` is `CODE: message` (or the message) of what failed. */
export interface ConformanceResult {
  readonly name: string;
  readonly ok: boolean;
  readonly error?: string;
}

/** `ok` when every case passed. */
export interface ConformanceReport {
  readonly ok: boolean;
  readonly cases: readonly ConformanceResult[];
}

const createTwiceCase: ConformanceCase = {
  name: 'createInstance is idempotent by client token',
  async run(h) {
    const client = h.open();
    const spec = await h.spec('idempotent');
    const first = ProviderInstance.parse(await client.createInstance(spec));
    const second = ProviderInstance.parse(await client.createInstance(spec));
    check(first.providerInstanceId === second.providerInstanceId, `second create made ${second.providerInstanceId}, first ${first.providerInstanceId}`);
    const withToken = (await client.listInstances()).filter((i) => i.clientToken === spec.clientToken);
    check(withToken.length === 1, `listInstances shows ${withToken.length} instances with the token, expected 1`);
  },
};

const crashCase: ConformanceCase = {
  name: 'a create whose answer was lost is found again by a new process',
  async run(h) {
    const spec = await h.spec('crash');
    // The first process sends its create and dies before reading the answer; every later request of it fails.
    const dying = new AbortController();
    let crashed = false;
    const crashingFetch: typeof fetch = async (input, init) => {
      if (crashed) throw new Error('process crashed');
      const method = (init?.method ?? 'GET').toUpperCase();
      if (method === 'GET' || method === 'HEAD') return h.subject.fetch(input, init);
      crashed = true;
      await h.subject.fetch(input, init);
      dying.abort(new Error('process crashed'));
      throw new Error('process crashed');
    };
    // The same for a provider that runs programs: the first mutating command runs to its end, its answer is lost.
    const run = h.run();
    const crashingRun: RunCommand = async (command, signal) => {
      if (crashed) throw new Error('process crashed');
      if (!command.mutating) return run(command, signal);
      crashed = true;
      await run(command);
      dying.abort(new Error('process crashed'));
      throw new Error('process crashed');
    };
    await h
      .open({ fetch: crashingFetch, run: crashingRun, signal: dying.signal })
      .createInstance(spec)
      .then(
        () => Promise.reject(new Error('create resolved although its process crashed')),
        () => undefined,
      );
    check(crashed, 'createInstance sent no mutating request');
    const fresh = h.open();
    const found = await fresh.findByClientToken(spec.clientToken);
    check(found !== null, 'findByClientToken found nothing after the crashed create');
    const again = await fresh.createInstance(spec);
    check(again.providerInstanceId === found.providerInstanceId, `create after crash made ${again.providerInstanceId}, found ${found.providerInstanceId}`);
  },
};

const transitionsCase: ConformanceCase = {
  name: 'an instance moves through running, stopped, running and deleted',
  async run(h) {
    const client = h.open();
    const { providerInstanceId: id } = await client.createInstance(await h.spec('transitions'));
    await h.waitFor(client, id, (s) => s === 'running');
    await client.stopInstance(id);
    await h.waitFor(client, id, (s) => s === 'stopped');
    await client.startInstance(id);
    await h.waitFor(client, id, (s) => s === 'running');
    await client.deleteInstance(id);
    await h.waitFor(client, id, (s) => s === 'deleted' || s === 'gone');
  },
};

const deleteTwiceCase: ConformanceCase = {
  name: 'deleteInstance is idempotent',
  async run(h) {
    const client = h.open();
    const { providerInstanceId: id } = await client.createInstance(await h.spec('delete-twice'));
    await h.waitFor(client, id, (s) => s === 'running');
    await client.deleteInstance(id);
    await client.deleteInstance(id);
    await h.waitFor(client, id, (s) => s === 'deleted' || s === 'gone');
    await client.deleteInstance(id);
  },
};

const wrongTokenCase: ConformanceCase = {
  name: 'a wrong token is a configuration error, not retried',
  async run(h) {
    const { wrongToken, wrongConfig } = h.subject;
    check(wrongToken !== undefined || wrongConfig !== undefined, 'the subject gives neither wrongToken nor wrongConfig');
    const before = h.requests();
    const error = await h
      .open(wrongToken !== undefined ? { token: wrongToken } : { config: wrongConfig })
      .listOffers()
      .then(
        () => null,
        (e: unknown) => e,
      );
    check(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    check(error.kind === 'configuration' && error.code === 'PROVIDER_CONFIGURATION', `expected configuration, got ${error.code}`);
    check(h.requests() - before === 1, `the refused call was sent ${h.requests() - before} times, expected once`);
    const shown = `${error.message} ${String(error.stack)}`;
    check(!shown.includes(wrongToken ?? h.subject.token) && !shown.includes(h.subject.token), 'the error message contains a token');
  },
};

const paginationCase: ConformanceCase = {
  name: 'listInstances follows pagination to the end',
  async run(h) {
    const client = h.open();
    const created = new Set<string>();
    for (let i = 0; i < (h.subject.pagedInstanceCount ?? 6); i++) {
      created.add((await client.createInstance(await h.spec(`page-${i}`))).providerInstanceId);
    }
    const before = h.requests();
    const listed = (await client.listInstances()).map((i) => ProviderInstance.parse(i).providerInstanceId);
    if (h.subject.unpaged !== true) check(h.requests() - before > 1, 'listInstances used one request: raise pagedInstanceCount above the page size');
    check(new Set(listed).size === listed.length, 'listInstances returned an instance twice');
    const missing = [...created].filter((id) => !listed.includes(id));
    check(missing.length === 0, `listInstances missed ${missing.join(', ')}`);
  },
};

const unknownIdCase: ConformanceCase = {
  name: 'getInstance of an unknown id is not-found',
  async run(h) {
    const error = await h
      .open()
      .getInstance(`${h.subject.runId ?? 'conformance'}-no-such-instance`)
      .then(
        () => null,
        (e: unknown) => e,
      );
    check(error instanceof ProviderError && error.kind === 'not-found', `expected not-found, got ${String(error)}`);
    check(error.code === 'PROVIDER_NOT_FOUND', `expected PROVIDER_NOT_FOUND, got ${error.code}`);
  },
};

/** The cases every provider must pass, in the order they are best run. */
export function providerConformanceCases(): readonly ConformanceCase[] {
  return [createTwiceCase, crashCase, transitionsCase, deleteTwiceCase, wrongTokenCase, paginationCase, unknownIdCase];
}

/**
 * Runs `cases` one after another against `subject` and reports each; never throws for a failing case. Each case gets
 * fresh clients and deletes every instance it created a spec for, waiting until they are gone.
 */
export async function runConformance(cases: readonly ConformanceCase[], subject: ConformanceSubject): Promise<ConformanceReport> {
  const results: ConformanceResult[] = [];
  for (const conformanceCase of cases) {
    const harness = startHarness(subject, conformanceCase.name);
    let error: string | undefined;
    try {
      await conformanceCase.run(harness);
    } catch (caught) {
      error = describe(caught);
    }
    try {
      await harness.cleanUp();
    } catch (caught) {
      error ??= `cleanup failed: ${describe(caught)}`;
    }
    results.push(error === undefined ? { name: conformanceCase.name, ok: true } : { name: conformanceCase.name, ok: false, error });
  }
  return { ok: results.every((r) => r.ok), cases: results };
}

function describe(error: unknown): string {
  if (error instanceof ProviderError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
