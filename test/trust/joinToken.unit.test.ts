import { describe, expect, it } from 'vitest';
import type { JoinTokenEvent } from '../../schemas/trust/events.ts';
import { CreateJoinToken, generateJoinToken, hashJoinSecret, parseJoinToken, UseJoinToken } from '../../schemas/trust/joinTokens.ts';
import { operatorCommands } from '../../services/api/commandCatalog.ts';
import type { NodeAggregateState } from '../../services/metal/node/node.ts';
import type { SiteState } from '../../schemas/site/siteState.ts';
import { createJoinToken, createSiteToken } from '../../services/trust/joinToken/create.ts';
import { joinTokenAggregate, type JoinTokenState } from '../../services/trust/joinToken/joinToken.ts';
import { useJoinToken } from '../../services/trust/joinToken/use.ts';

const now = '2026-01-01T00:00:00.000Z';
const site: SiteState = { exists: true, siteId: 'dc1', name: 'DC 1', provisioningCidrs: [] };
const uuid = '4c4c4544-0042-3510-8052-b4c04f4a4e31';
const node = (inventoryUuid: string | null = uuid) =>
  ({
    exists: true,
    nodeId: 'n1',
    siteId: 'dc1',
    state: 'deploying',
    inventory: inventoryUuid === null ? null : { productUuid: inventoryUuid },
  }) as unknown as NodeAggregateState;
const ctx = <D>(dependencies: D, at = now) => ({ commandId: 'cmd-00000001', actor: 'test', now: at, dependencies });
const given = (...events: JoinTokenEvent[]): JoinTokenState => events.reduce(joinTokenAggregate.evolve, joinTokenAggregate.initialState);
const minted = generateJoinToken();
const secret = parseJoinToken(minted.token)!.secret;
const create = (extra: Record<string, unknown> = {}) =>
  CreateJoinToken.parse({ tokenId: minted.tokenId, hash: minted.hash, role: 'ramdisk', siteId: 'dc1', nodeId: 'n1', ttlSeconds: 600, ...extra });
const created = (extra: Record<string, unknown> = {}) => createJoinToken.decide(create(extra), given(), ctx({ site, node: node() }))[0]!;
const use = (extra: Record<string, unknown> = {}) =>
  UseJoinToken.parse({
    tokenId: minted.tokenId,
    presentedHash: hashJoinSecret(secret),
    role: 'ramdisk',
    siteId: 'dc1',
    nodeId: 'n1',
    agentId: 'ramdisk-n1-abcdefgh',
    ...extra,
  });
const outcome = (state: JoinTokenState, command = use(), at = now, n = node()) => useJoinToken.decide(command, state, ctx(n, at))[0]!;
const reasonOf = (event: JoinTokenEvent) => (event.type === 'JoinRefused' ? event.data.reason : event.type);

describe('join tokens', () => {
  it('a minted token parses back into its id and a secret whose hash is what is stored', () => {
    const parsed = parseJoinToken(minted.token);
    expect(parsed?.tokenId).toBe(minted.tokenId);
    expect(hashJoinSecret(parsed!.secret)).toBe(minted.hash);
    expect(minted.token).not.toContain(minted.hash);
    expect(parseJoinToken(`${minted.token}x`)).toBeUndefined();
    expect(generateJoinToken().token).not.toBe(minted.token);
  });

  it('pki.createJoinToken records the hash, scope and expiry, never the secret', () => {
    const event = created({ expect: { productUuid: uuid.toUpperCase() } });
    expect(event).toEqual({
      type: 'JoinTokenCreated',
      data: {
        tokenId: minted.tokenId,
        hash: minted.hash,
        role: 'ramdisk',
        siteId: 'dc1',
        nodeId: 'n1',
        expiresAt: '2026-01-01T00:10:00.000Z',
        expect: { productUuid: uuid },
        attestor: 'issued',
      },
    });
    expect(JSON.stringify(event)).not.toContain(secret);
  });

  it('pki.createJoinToken is idempotent for the same token and refuses another under the same id', () => {
    const state = given(created());
    expect(createJoinToken.decide(create(), state, ctx({ site, node: node() }))).toEqual([]);
    expect(() => createJoinToken.decide(create({ hash: '0'.repeat(64) }), state, ctx({ site, node: node() }))).toThrow(
      expect.objectContaining({ code: 'ALREADY_EXISTS' }),
    );
  });

  it('pki.createJoinToken refuses unknown sites and nodes, node ids on site tokens and past expiries', () => {
    expect(() => createJoinToken.decide(create(), given(), ctx({ site: { exists: false }, node: node() }))).toThrow(
      expect.objectContaining({ code: 'PRECONDITION_FAILED' }),
    );
    expect(() => createJoinToken.decide(create(), given(), ctx({ site, node: { exists: false } }))).toThrow(
      expect.objectContaining({ code: 'PRECONDITION_FAILED' }),
    );
    expect(() => createJoinToken.decide(create({ ttlSeconds: undefined, expiresAt: '2025-12-31T00:00:00Z' }), given(), ctx({ site, node: node() }))).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
    expect(CreateJoinToken.safeParse({ ...create(), role: 'site' }).success).toBe(false);
    expect(CreateJoinToken.safeParse({ ...create(), nodeId: undefined }).success).toBe(false);
  });

  it('siteTokens.create makes a site-role token', () => {
    const [event] = createSiteToken.decide({ tokenId: minted.tokenId, hash: minted.hash, siteId: 'dc1' }, given(), ctx({ site, node: null }));
    expect(event).toMatchObject({ type: 'JoinTokenCreated', data: { role: 'site', nodeId: null, expiresAt: '2026-01-01T01:00:00.000Z' } });
  });

  it('pki.useJoinToken spends a valid token once, then refuses it as used', () => {
    const first = outcome(given(created()));
    expect(first).toEqual({ type: 'JoinTokenUsed', data: { tokenId: minted.tokenId, agentId: 'ramdisk-n1-abcdefgh' } });
    expect(reasonOf(outcome(given(created(), first)))).toBe('JOIN_TOKEN_USED');
  });

  it('pki.useJoinToken refuses unknown, forged, expired, other-role and other-node tokens with stable codes', () => {
    const state = given(created());
    expect(reasonOf(outcome(given()))).toBe('JOIN_TOKEN_UNKNOWN');
    expect(reasonOf(outcome(state, use({ presentedHash: hashJoinSecret('x'.repeat(43)) })))).toBe('JOIN_TOKEN_INVALID');
    expect(reasonOf(outcome(state, use(), '2026-01-01T00:10:00.000Z'))).toBe('JOIN_TOKEN_EXPIRED');
    expect(reasonOf(outcome(state, use({ role: 'node' })))).toBe('JOIN_ROLE_MISMATCH');
    expect(reasonOf(outcome(state, use({ nodeId: 'n2' })))).toBe('JOIN_SCOPE_MISMATCH');
    expect(reasonOf(outcome(state, use({ siteId: 'dc2' })))).toBe('JOIN_SCOPE_MISMATCH');
    expect(reasonOf(outcome(given(), use({ tokenId: undefined, presentedHash: undefined })))).toBe('JOIN_TOKEN_MALFORMED');
  });

  it('a forged secret is refused before anything about the token is revealed', () => {
    const spent = given(created(), { type: 'JoinTokenUsed', data: { tokenId: minted.tokenId, agentId: 'a' } });
    expect(reasonOf(outcome(spent, use({ presentedHash: '0'.repeat(64), role: 'site' }), '2030-01-01T00:00:00Z'))).toBe('JOIN_TOKEN_INVALID');
  });

  it('pki.useJoinToken checks the product UUID against the expectation and the Redfish inventory', () => {
    const state = given(created({ expect: { productUuid: uuid } }));
    expect(reasonOf(outcome(state, use({ productUuid: uuid.toUpperCase() })))).toBe('JoinTokenUsed');
    expect(reasonOf(outcome(state, use()))).toBe('JOIN_EXPECTATION_FAILED');
    expect(reasonOf(outcome(state, use({ productUuid: '00000000-0000-0000-0000-000000000001' })))).toBe('JOIN_EXPECTATION_FAILED');
    expect(reasonOf(outcome(state, use({ productUuid: uuid }), now, node('00000000-0000-0000-0000-000000000002')))).toBe('JOIN_EXPECTATION_FAILED');
    expect(reasonOf(outcome(state, use({ productUuid: uuid }), now, node(null)))).toBe('JoinTokenUsed');
  });

  it('refusals are audited without the presented secret and do not spend the token', () => {
    const refused = outcome(given(created()), use({ role: 'site' }));
    expect(refused.type).toBe('JoinRefused');
    expect(JSON.stringify(refused)).not.toContain(secret);
    expect(reasonOf(outcome(given(created(), refused)))).toBe('JoinTokenUsed');
  });

  it('join-token commands are not operator HTTP commands (they are minted where the secret is made)', () => {
    const names = operatorCommands.map((c) => c.name);
    for (const name of ['pki.createJoinToken', 'siteTokens.create', 'pki.useJoinToken']) expect(names).not.toContain(name);
  });

  it('a provisioned token (minted by a plugin’s step) is made only with an expectation, and joins only the machine it names', () => {
    expect(() => created({ attestor: 'provisioned' })).toThrow(expect.objectContaining({ code: 'JOIN_EXPECTATION_REQUIRED' }));
    const provisioned = given(created({ attestor: 'provisioned', expect: { productUuid: uuid } }));
    expect(provisioned).toMatchObject({ attestor: 'provisioned' });
    expect(reasonOf(outcome(provisioned, use({ productUuid: uuid })))).toBe('JoinTokenUsed');
    expect(reasonOf(outcome(provisioned, use()))).toBe('JOIN_EXPECTATION_FAILED');
    // One in the log without an expectation (written around the decider) still never joins.
    const { expect: _, ...bare } = created().data as Record<string, unknown>;
    const forged = given({ type: 'JoinTokenCreated', data: { ...bare, expect: null, attestor: 'provisioned' } } as JoinTokenEvent);
    expect(reasonOf(outcome(forged, use({ productUuid: uuid })))).toBe('JOIN_EXPECTATION_FAILED');
  });

  it('a token made before attestors were named reads as issued: its expectation, if any, still holds', () => {
    const { attestor: _, ...legacy } = created().data as Record<string, unknown>;
    const state = given({ type: 'JoinTokenCreated', data: legacy } as JoinTokenEvent);
    expect(state).toMatchObject({ attestor: 'issued' });
    expect(reasonOf(outcome(state))).toBe('JoinTokenUsed');
  });
});
