import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealingAad } from '../../schemas/secrets/sealed.ts';
import type { SecretEvent } from '../../schemas/secrets/events.ts';
import { edgeCommands, operatorCommands } from '../../services/api/commandCatalog.ts';
import { MasterKey } from '../../services/secrets/masterKey.ts';
import { seal } from '../../services/secrets/sealing.ts';
import { deleteSecret } from '../../services/secrets/secret/delete.ts';
import { putSecret } from '../../services/secrets/secret/put.ts';
import { secretAggregate, type SecretState } from '../../services/secrets/secret/secret.ts';
import { thrownCode } from '../support/thrownCode.ts';

const key = new MasterKey(randomBytes(32));
const context = { commandId: 'cmd-00000001', actor: 'test', now: '2025-01-01T00:00:00.000Z', dependencies: undefined };
const given = (...events: SecretEvent[]): SecretState => events.reduce(secretAggregate.evolve, secretAggregate.initialState);
const put = (version: number, kind: 'bmc' | 'generic' = 'bmc') => ({ secretId: 's1', kind, version, sealed: seal('"v"', key, sealingAad('s1', version)) });
const stored = (version: number): SecretEvent => ({ type: 'SecretStored', data: { ...put(version), keyId: key.keyId, description: null } });

describe('secrets.put / secrets.delete', () => {
  it('stores version 1 of a new secret with its key id', () => {
    const [event] = putSecret.decide(put(1), given(), context);
    expect(event).toMatchObject({ type: 'SecretStored', data: { secretId: 's1', version: 1, keyId: key.keyId, description: null } });
  });

  it('accepts only the next version (a value is sealed for one version)', () => {
    expect(thrownCode(() => putSecret.decide(put(1), given(stored(1)), context))).toBe('CONCURRENCY_CONFLICT');
    expect(thrownCode(() => putSecret.decide(put(3), given(stored(1)), context))).toBe('CONCURRENCY_CONFLICT');
    expect(putSecret.decide(put(2), given(stored(1)), context)[0]!.data).toMatchObject({ version: 2 });
  });

  it('refuses changing the kind of a live secret', () => {
    expect(thrownCode(() => putSecret.decide(put(2, 'generic'), given(stored(1)), context))).toBe('ILLEGAL_TRANSITION');
  });

  it('deletes a live secret, is a no-op on a deleted one, NOT_FOUND on an unknown one', () => {
    expect(deleteSecret.decide({ secretId: 's1' }, given(stored(1)), context)).toEqual([{ type: 'SecretDeleted', data: { secretId: 's1', version: 1 } }]);
    const deleted = given(stored(1), { type: 'SecretDeleted', data: { secretId: 's1', version: 1 } });
    expect(deleteSecret.decide({ secretId: 's1' }, deleted, context)).toEqual([]);
    expect(thrownCode(() => deleteSecret.decide({ secretId: 's1' }, given(), context))).toBe('NOT_FOUND');
  });

  it('keeps counting versions after a delete, so an old blob never fits the new lifetime', () => {
    const deleted = given(stored(1), { type: 'SecretDeleted', data: { secretId: 's1', version: 1 } });
    expect(thrownCode(() => putSecret.decide(put(1, 'generic'), deleted, context))).toBe('CONCURRENCY_CONFLICT');
    expect(putSecret.decide(put(2, 'generic'), deleted, context)[0]!.data).toMatchObject({ version: 2, kind: 'generic' });
  });

  it('is not an operator command: the HTTP edge seals and sends it', () => {
    expect(edgeCommands.map((c) => c.name)).toEqual(expect.arrayContaining(['secrets.put', 'secrets.delete']));
    expect(operatorCommands.map((c) => c.name)).not.toContain('secrets.put');
    expect(operatorCommands.map((c) => c.name)).not.toContain('secrets.delete');
  });
});
