import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../services/platform/config.ts';
import { EventHeaders, EventMac, loadEventMac } from '../../services/platform/eventStore/eventMac.ts';
import { tempDir } from '../support/natsServer.ts';

const payload = new TextEncoder().encode('{"events":[]}');
const subject = 'bc.evt.metal.node.n1';

/** The headers a stored message carries when the event store appended it. */
function stored(mac: EventMac, options: { subject?: string; expectedSeq?: number; commandId?: string } = {}) {
  const messageId = mac.messageId(options.commandId ?? 'cmd-00000001');
  const expectedSeq = options.expectedSeq ?? 7;
  const h = headers();
  h.set(EventHeaders.messageId, messageId);
  h.set(EventHeaders.expectedSeq, String(expectedSeq));
  h.set(EventHeaders.mac, mac.sign(options.subject ?? subject, messageId, expectedSeq, payload));
  return h;
}

describe('EventMac', () => {
  const mac = new EventMac(randomBytes(32));

  it('EventMac accepts what it signed', () => {
    expect(mac.verify(subject, stored(mac), payload)).toBeUndefined();
  });

  it('EventMac refuses a message without a MAC as MAC_MISSING', () => {
    expect(mac.verify(subject, undefined, payload)).toMatchObject({ reason: 'MAC_MISSING' });
    expect(mac.verify(subject, headers(), payload)).toMatchObject({ reason: 'MAC_MISSING' });
  });

  it('EventMac refuses a batch altered, moved to another subject, or stored at another expected sequence', () => {
    expect(mac.verify(subject, stored(mac), new TextEncoder().encode('{"events":[1]}'))).toMatchObject({ reason: 'MAC_INVALID' });
    expect(mac.verify('bc.evt.metal.node.n2', stored(mac), payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const moved = stored(mac);
    moved.set(EventHeaders.expectedSeq, '8');
    expect(mac.verify(subject, moved, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const renamed = stored(mac);
    renamed.set(EventHeaders.messageId, mac.messageId('cmd-00000002'));
    expect(mac.verify(subject, renamed, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const stripped = stored(mac);
    stripped.delete(EventHeaders.expectedSeq);
    expect(mac.verify(subject, stripped, payload)).toMatchObject({ reason: 'MAC_INVALID' });
  });

  it('EventMac covers the position a message carries: altered, stripped or added to a message signed without one, it is refused', () => {
    const withPosition = () => {
      const h = stored(mac);
      h.set(EventHeaders.position, '12');
      h.set(EventHeaders.mac, mac.sign(subject, h.get(EventHeaders.messageId), 7, payload, 12));
      return h;
    };
    expect(mac.verify(subject, withPosition(), payload)).toBeUndefined();
    const altered = withPosition();
    altered.set(EventHeaders.position, '2');
    expect(mac.verify(subject, altered, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const stripped = withPosition();
    stripped.delete(EventHeaders.position);
    expect(mac.verify(subject, stripped, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const added = stored(mac);
    added.set(EventHeaders.position, '1');
    expect(mac.verify(subject, added, payload)).toMatchObject({ reason: 'MAC_INVALID' });
  });

  it('EventMac covers the state a message carries: altered, stripped, moved into the payload or added, it is refused', () => {
    const state = '1 0 {"exists":true,"state":"ready"}';
    const withState = (value = state) => {
      const h = stored(mac);
      h.set(EventHeaders.position, '3');
      h.set(EventHeaders.state, value);
      h.set(EventHeaders.mac, mac.sign(subject, h.get(EventHeaders.messageId), 7, payload, 3, value));
      return h;
    };
    expect(mac.verify(subject, withState(), payload)).toBeUndefined();
    const altered = withState();
    altered.set(EventHeaders.state, state.replace('ready', 'failed'));
    expect(mac.verify(subject, altered, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const stripped = withState();
    stripped.delete(EventHeaders.state);
    expect(mac.verify(subject, stripped, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    // A state whose last characters are read as the payload's first (the MAC input holds the state's length).
    const shifted = withState(`${state}{`);
    shifted.set(EventHeaders.state, state);
    expect(mac.verify(subject, shifted, new TextEncoder().encode(`{${new TextDecoder().decode(payload)}`))).toMatchObject({ reason: 'MAC_INVALID' });
    const added = stored(mac);
    added.set(EventHeaders.position, '3');
    added.set(EventHeaders.mac, mac.sign(subject, added.get(EventHeaders.messageId), 7, payload, 3));
    expect(mac.verify(subject, added, payload)).toBeUndefined();
    added.set(EventHeaders.state, state);
    expect(mac.verify(subject, added, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    const withoutPosition = withState();
    withoutPosition.delete(EventHeaders.position);
    expect(mac.verify(subject, withoutPosition, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    expect(() => mac.sign(subject, 'm', 7, payload, undefined, state)).toThrow(/with a position only/);
  });

  it('EventMac names both keys when a message was signed under another one', () => {
    const other = new EventMac(randomBytes(32));
    expect(mac.verify(subject, stored(other), payload)).toEqual({ reason: 'MAC_INVALID', detail: expect.stringContaining(other.keyId) });
  });

  it('EventMac keys message ids: the command id stays readable, the rest cannot be guessed without the key', () => {
    const other = new EventMac(randomBytes(32));
    expect(mac.messageId('cmd-00000001')).toMatch(/^cmd-00000001\.[A-Za-z0-9_-]{22}$/);
    expect(mac.messageId('cmd-00000001')).toBe(mac.messageId('cmd-00000001'));
    expect(mac.messageId('cmd-00000001')).not.toBe(other.messageId('cmd-00000001'));
  });

  it('EventMac writes the same bytes as before its key was set up once (stored messages stay verifiable)', () => {
    // Computed by the code of 2e5618a, which built the HMAC from the key bytes per message.
    const fixed = new EventMac(Buffer.alloc(32, 7));
    const messageId = fixed.messageId('cmd-00000001');
    expect(fixed.keyId).toBe('81653e93b0aa1244');
    expect(messageId).toBe('cmd-00000001.0YV0vgRUjH1X5HVtl_5Q2I');
    expect(fixed.sign(subject, messageId, 7, payload)).toBe('v1.81653e93b0aa1244.P9TjIbCY8m-z-WkVL1CBU5OMSezov5rmZd9vBE2MW7I');
    expect(fixed.verify(subject, stored(fixed), payload)).toBeUndefined();
  });

  it('EventMac computes HMAC-SHA256 as createHmac does, for payloads inside and past its reused buffer and any subject', () => {
    const key = randomBytes(32);
    const own = new EventMac(key);
    const reference = (fields: string, body: Uint8Array) =>
      `v1.${own.keyId}.${createHmac('sha256', key).update(fields, 'utf8').update(body).digest('base64url')}`;
    for (const size of [0, 1, 55, 64, 400, 64 * 1024 - 200, 64 * 1024, 200_000]) {
      const body = randomBytes(size);
      for (const on of ['bc.evt.metal.node.n1', 'bc.evt.metal.node.nœud-é']) {
        expect(own.sign(on, 'm.1', 3, body)).toBe(reference(`bc.event/v1\n${on}\nm.1\n3\n`, body));
        expect(own.sign(on, 'm.1', 3, body, 9)).toBe(reference(`bc.event/v1+position\n${on}\nm.1\n3\n9\n`, body));
        expect(own.verifyValues(on, own.sign(on, 'm.1', 3, body, 9), 'm.1', '3', body, '9')).toBeUndefined();
      }
    }
    // The message id is keyed the same way, and stays what createHmac made, so ids of stored commands do not change.
    for (const commandId of ['cmd-1', 'bench-vm-000001', 'join-é-œ', 'x'.repeat(30_000)]) {
      const id = createHmac('sha256', key).update('msg-id\n').update(commandId).digest('base64url').slice(0, 22);
      expect(own.messageId(commandId)).toBe(`${commandId}.${id}`);
    }
  });

  it('EventMac refuses a MAC header of the right shape whose MAC is cut short, padded, not base64url or not spelled as written', () => {
    const good = stored(mac);
    const value = good.get(EventHeaders.mac);
    // The same 32 bytes spelled otherwise: the last character's two low bits are padding a decoder ignores.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = `${value.slice(0, -1)}${alphabet[alphabet.indexOf(value.at(-1)!) ^ 1]}`;
    expect(Buffer.from(respelled.split('.')[2]!, 'base64url')).toEqual(Buffer.from(value.split('.')[2]!, 'base64url'));
    for (const bad of [value.slice(0, -1), `${value}A`, `${value.slice(0, -2)}!!`, `${value.slice(0, -1)}=`, respelled]) {
      const h = stored(mac);
      h.set(EventHeaders.mac, bad);
      expect(mac.verify(subject, h, payload)).toMatchObject({ reason: 'MAC_INVALID' });
    }
  });
});

describe('event key', () => {
  it('loadEventMac creates <dataDir>/event.key (0600, apart from the master key) once, and every process loads the same key', () => {
    using dir = tempDir();
    const config = loadConfig({}, { dataDir: dir.path });
    const first = loadEventMac(config);
    expect(statSync(join(dir.path, 'event.key')).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir.path, 'master.key'))).toBe(false);
    expect(loadEventMac(config).keyId).toBe(first.keyId);
  });

  it('loadEventMac takes BC_EVENT_KEY and refuses a malformed one with EVENT_KEY_INVALID, without quoting it', () => {
    using dir = tempDir();
    const bytes = randomBytes(32);
    expect(loadEventMac(loadConfig({ BC_EVENT_KEY: bytes.toString('base64') }, { dataDir: dir.path })).keyId).toBe(new EventMac(bytes).keyId);
    const bad = randomBytes(16).toString('base64');
    let thrown: unknown;
    try {
      loadEventMac(loadConfig({ BC_EVENT_KEY: bad }, { dataDir: dir.path }));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'EVENT_KEY_INVALID' });
    expect((thrown as Error).message).not.toContain(bad);
  });
});
