import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { identityOf, type AgentIdentity } from '../../daemon/agent/identity.ts';
import type { AgentCommand } from '../../schemas/agent/agentCommand.ts';
import { signAgentResult } from '../../schemas/agent/agentResultCodec.ts';
import type { AgentState } from '../../schemas/trust/agentState.ts';
import { verifiedResult, type KeyFreshness } from '../../services/agents/agentExchange.ts';
import type { AggregateRepository } from '../../services/platform/commands/aggregateRepository.ts';
import { ResultRejectedError } from '../../plugins/sdk/stepErrors.ts';
import { agentCommand } from '../daemon/harness.ts';

const oldKey = identityOf(generateKeyPairSync('ed25519').privateKey);
const newKey = identityOf(generateKeyPairSync('ed25519').privateKey);
const registered = (key: AgentIdentity): AgentState => ({
  exists: true,
  agentId: 'site-dc1',
  role: 'site',
  siteId: 'dc1',
  nodeId: null,
  publicKey: key.publicKeyBase64,
  keyId: key.keyId,
  joinTokenIds: [],
});
const sign = (command: AgentCommand, key: AgentIdentity) =>
  signAgentResult(
    {
      commandId: command.commandId,
      kind: command.kind,
      nodeId: command.nodeId,
      siteId: command.siteId,
      agentId: 'site-dc1',
      ok: true,
      errorCode: '',
      errorMessage: '',
      payload: null,
      executedAtMs: Date.now(),
      commandNonce: command.nonce,
    },
    key,
  );

/**
 * A repository whose cache (`latestSeen`, confirmed by the log within 1 s) holds `seen` while the log holds `logged`:
 * counts the reads of the log (`judged`, which is how `verifiedResult` reads it).
 */
function repositoryOf(seen: AgentState, logged: AgentState) {
  const reads = { log: 0, cache: 0 };
  const repository = {
    latestSeen: async () => ((reads.cache += 1), { state: seen }),
    judged: async <V>(_source: unknown, _id: string, judge: (s: { state: AgentState }) => V) => ((reads.log += 1), judge({ state: logged })),
  } as unknown as AggregateRepository;
  return { repository, reads };
}

const verify = (repository: AggregateRepository, command: AgentCommand, bytes: Uint8Array, keys: KeyFreshness) =>
  verifiedResult({ repository }, command, bytes, undefined, keys).then(
    (result) => result.agentId,
    (err: unknown) => (err instanceof ResultRejectedError ? err.reason : err),
  );

describe('verifiedResult: how fresh the signer key is', () => {
  it('reads the log for every verdict by default (the result intake)', async () => {
    const command = agentCommand('power.get');
    const { repository, reads } = repositoryOf(registered(oldKey), registered(newKey));
    // The cache's key would accept; the log's, rotated since, refuses.
    expect(await verify(repository, command, sign(command, oldKey), 'read')).toBe('FORGED');
    expect(reads).toEqual({ log: 1, cache: 0 });
  });

  it('accepts on a key the log confirmed within 1 s (the exchange), and refuses only on a read of the log', async () => {
    const command = agentCommand('power.get');
    const accepted = repositoryOf(registered(oldKey), registered(oldKey));
    expect(await verify(accepted.repository, command, sign(command, oldKey), 'seen')).toBe('site-dc1');
    expect(accepted.reads).toEqual({ log: 0, cache: 1 });

    // A key registered since the cache was confirmed: the cache refuses, the log's read accepts.
    const rotated = repositoryOf(registered(oldKey), registered(newKey));
    expect(await verify(rotated.repository, command, sign(command, newKey), 'seen')).toBe('site-dc1');
    expect(rotated.reads).toEqual({ log: 1, cache: 1 });

    // A forgery is refused on the log's word, never on the cache's alone.
    const forger = identityOf(generateKeyPairSync('ed25519').privateKey);
    const forged = repositoryOf(registered(oldKey), registered(oldKey));
    expect(await verify(forged.repository, command, sign(command, forger), 'seen')).toBe('FORGED');
    expect(forged.reads).toEqual({ log: 1, cache: 1 });
  });
});
