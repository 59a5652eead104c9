/**
 * What a conformance run works in and with: the subject account, and the harness each case gets (counted clients,
 * deterministic specs, cleanup that deletes what the case created and waits until it is gone).
 */
import { ProviderInstance, ProviderOffer } from '../../schemas/vps/provider.ts';
import type { ProviderInstanceSpec, ProviderInstanceState } from '../../schemas/vps/provider.ts';
import { ProviderError, clientTokenOf, connectProvider } from './provider.ts';
import type { ProviderClient, ProviderDefinition } from './provider.ts';
import { runCommand, type RunCommand } from './providerCommands.ts';

/** The account a conformance run works in. It creates and deletes instances there: use a throwaway account. */
export interface ConformanceSubject<C = unknown> {
  readonly provider: ProviderDefinition<string, C>;
  /** The account config, validated with the provider's schema. */
  readonly config: unknown;
  readonly token: string;
  /** A token the cloud refuses: the suite checks it yields a `configuration` error without retries. */
  readonly wrongToken?: string;
  /**
   * For a provider whose accounts hold no token (libvirt over a local socket, where the socket's permissions are the
   * credential): an account config the cloud refuses, checked the same way. Give this or `wrongToken`.
   */
  readonly wrongConfig?: unknown;
  readonly fetch: typeof fetch;
  /** The program runner for providers driven by a local tool; default the platform's `runCommand`. Counted like fetch. */
  readonly run?: RunCommand;
  /**
   * True for a cloud whose list call has no pages (libvirt lists every domain of a connection at once): the
   * pagination case then checks only that every instance is listed exactly once.
   */
  readonly unpaged?: boolean;
  /** The size to create; default the first of `listOffers()`. */
  readonly offerId?: string;
  /** Image to create from. Default `debian-12`. */
  readonly image?: string;
  /** Pause between state polls. Default 1000 ms; use 0 when replaying a recording. */
  readonly pollIntervalMs?: number;
  /** How long an instance may take to reach a state. Default 600 000 ms (10 minutes). */
  readonly timeoutMs?: number;
  /** How many instances the pagination case creates; must exceed the provider's page size. Default 6. */
  readonly pagedInstanceCount?: number;
  /** Prefix of every name and client token; make it unique per run against a real account. Default `conformance`. */
  readonly runId?: string;
}

/** What `open` may change from the subject's account. */
export interface HarnessOpenOptions {
  token?: string;
  config?: unknown;
  fetch?: typeof fetch;
  run?: RunCommand;
  signal?: AbortSignal;
}

/** What a case works with: clients over the subject's account, and bookkeeping that cleans up after it. */
export interface ConformanceHarness {
  readonly subject: ConformanceSubject;
  /** A fresh client, as a new process would build it; `fetch` and `run` default to the subject's (counted) ones. */
  open(options?: HarnessOpenOptions): ProviderClient;
  /** A spec with a deterministic token and name; the instance it creates is deleted when the case ends. */
  spec(label: string): Promise<ProviderInstanceSpec>;
  /** Requests made through the subject's fetch and commands through its runner so far in this case. */
  requests(): number;
  /** The subject's (counted) program runner, for a case that wraps it. */
  run(): RunCommand;
  waitFor(client: ProviderClient, id: string, accept: (state: ProviderInstanceState | 'gone') => boolean): Promise<void>;
}

export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/**
 * The bookkeeping of one conformance case: counted clients over the subject's account, deterministic specs, and a
 * cleanup that deletes every instance the case created and waits until they are gone.
 */
export function startHarness(subject: ConformanceSubject, caseName: string): ConformanceHarness & { cleanUp(): Promise<void> } {
  let requests = 0;
  const countedFetch: typeof fetch = (input, init) => {
    requests++;
    return subject.fetch(input, init);
  };
  const subjectRun = subject.run ?? runCommand;
  const countedRun: RunCommand = (command, signal) => {
    requests++;
    return subjectRun(command, signal);
  };
  // Every instance a client of the case created is remembered, so cleanup also finds one under an unexpected token.
  const created = new Set<string>();
  const open = (options: HarnessOpenOptions = {}): ProviderClient => {
    const account = {
      config: options.config ?? subject.config,
      token: options.token ?? subject.token,
      fetch: options.fetch ?? countedFetch,
      run: options.run ?? countedRun,
      signal: options.signal,
    };
    const client = connectProvider(subject.provider, account);
    // Delegates method by method: a provider's client may be a class instance, whose methods a spread would drop.
    return {
      listOffers: () => client.listOffers(),
      async createInstance(spec) {
        const instance = await client.createInstance(spec);
        created.add(instance.providerInstanceId);
        return instance;
      },
      getInstance: (id) => client.getInstance(id),
      findByClientToken: (token) => client.findByClientToken(token),
      startInstance: (id) => client.startInstance(id),
      stopInstance: (id) => client.stopInstance(id),
      deleteInstance: (id) => client.deleteInstance(id),
      listInstances: () => client.listInstances(),
    };
  };
  const tokens: string[] = [];
  const slug = caseName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 24)
    .replace(/-$/, '');
  let offerId = subject.offerId;
  const pollIntervalMs = subject.pollIntervalMs ?? 1000;
  const timeoutMs = subject.timeoutMs ?? 600_000;

  const waitFor: ConformanceHarness['waitFor'] = async (client, id, accept) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await client.getInstance(id).then(
        (instance) => ProviderInstance.parse(instance).state,
        (error: unknown) => {
          if (error instanceof ProviderError && error.kind === 'not-found') return 'gone' as const;
          throw error;
        },
      );
      if (accept(state)) return;
      if (state === 'error') throw new Error(`instance ${id} went to error`);
      if (Date.now() > deadline) throw new Error(`instance ${id} still ${state} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
    }
  };

  return {
    subject,
    open,
    requests: () => requests,
    run: () => countedRun,
    waitFor,
    async spec(label) {
      if (offerId === undefined) {
        const offers = (await open().listOffers()).map((offer) => ProviderOffer.parse(offer));
        check(offers[0] !== undefined, 'listOffers returned no offers');
        offerId = offers[0].offerId;
      }
      const key = `${subject.runId ?? 'conformance'}/${slug}/${label}`;
      const clientToken = clientTokenOf(key);
      tokens.push(clientToken);
      return {
        clientToken,
        name: `bc-${slug}-${label}`.slice(0, 63),
        offerId,
        image: subject.image ?? 'debian-12',
        sshKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBcConformanceKey conformance'],
      };
    },
    async cleanUp() {
      const client = open();
      const leftovers = new Set(created);
      for (const token of tokens) {
        const instance = await client.findByClientToken(token);
        if (instance !== null) leftovers.add(instance.providerInstanceId);
      }
      for (const id of leftovers) {
        await client.deleteInstance(id);
        await waitFor(client, id, (s) => s === 'deleted' || s === 'gone');
      }
    },
  };
}
